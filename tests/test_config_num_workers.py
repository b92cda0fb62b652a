"""``train.num_workers``: the run's DataLoaders load batches in that many worker processes, with
the same batches as in the main process; a negative count is refused at its line."""

from __future__ import annotations

import numpy as np
import pytest

from autogradcli.config import ConfigError, build_experiment, load_config

CONFIG = """\
data: {{dataset: spirals, n_per_class: 20, classes: 2, val_split: 0.25}}
model: [{{type: Linear, in_features: auto, out_features: 2}}]
train: {{batch_size: 8, num_workers: {n}}}
"""


def _config(tmp_path, n):
    path = tmp_path / f"c{n}.yaml"
    path.write_text(CONFIG.format(n=n))
    return load_config(str(path))


def _batches(loader):
    return [np.concatenate([x.numpy().ravel(), y.numpy().ravel()]) for x, y in loader]


def test_num_workers_reaches_the_loaders_with_the_same_batches(tmp_path):
    main = build_experiment(_config(tmp_path, 0))
    workers = build_experiment(_config(tmp_path, 2))
    assert main.train_loader.num_workers == 0
    assert workers.train_loader.num_workers == 2 and workers.val_loader.num_workers == 2
    for a, b in zip(_batches(main.train_loader), _batches(workers.train_loader)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(_batches(main.val_loader), _batches(workers.val_loader)):
        np.testing.assert_array_equal(a, b)


def test_negative_num_workers_is_refused_at_its_line(tmp_path):
    with pytest.raises(ConfigError) as info:
        _config(tmp_path, -1)
    text = "\n".join(str(i) for i in info.value.issues)
    assert "c-1.yaml:3:" in text and "train.num_workers" in text
