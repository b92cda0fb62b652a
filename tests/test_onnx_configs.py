"""Every shipped config's model (built from the config as the trainer builds it, untrained)
exported to ONNX: ONNX Runtime gives autogradcli's outputs at two batch sizes of real rows."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from onnx_runtime import check_export

import autogradcli as ag

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "configs", "*.yaml")))


def _overrides(name: str, tmp_path) -> list[str]:
    """The image folder config reads a folder of images: a small one is written first."""
    if name != "image_folder.yaml":
        return []
    pytest.importorskip("PIL")
    from autogradcli.data.image.digits import write_digit_images

    write_digit_images(tmp_path / "digits", limit=30)
    return [f"data.root={tmp_path / 'digits'}"]


@pytest.mark.parametrize("name", CONFIGS)
def test_shipped_config_model_exports(name, tmp_path):
    pytest.importorskip("onnxruntime")
    from autogradcli.config import build_experiment, load_config

    config = load_config(os.path.join(REPO, "configs", name), _overrides(name, tmp_path))
    exp = build_experiment(config)
    dataset = exp.train_loader.dataset
    first = [dataset[i][0] for i in range(12)]
    rows = ag.tensor(np.stack([x.numpy() if isinstance(x, ag.Tensor) else x for x in first]))

    def inputs(n):  # different rows for each batch size
        return (rows[n : 2 * n],)

    check_export(exp.model, inputs)


def test_every_shipped_config_is_covered():
    assert len(CONFIGS) >= 11 and "char_gpt.yaml" in CONFIGS and "char_lstm.yaml" in CONFIGS
