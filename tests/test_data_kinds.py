"""The data-kind contract through a stand-in kind registered here: the config reads its
settings from its ``__init__``, ``fit`` sees the training rows only (never a validation or
test row), its state round-trips through the run folder's ``data_state.json``, and eval and
predict rebuild it from that file without the training data."""

from __future__ import annotations

import csv
import glob
import json
import os

import numpy as np
import pytest
from test_cli_helpers import agrad, write

from autogradcli.data.dataset import TensorDataset
from autogradcli.data.kinds import KINDS, DataError, DataKind, Problem, Source
from autogradcli.tensor.tensor import wrap

fitted_rows: list[list[int]] = []  # the rows each fit saw, in this process


class _Rows(Source):
    """A table of (id, value, label) rows."""

    def __init__(self, ids, values, labels) -> None:
        self.ids, self.values, self.labels = ids, np.asarray(values, np.float32), labels

    def __len__(self) -> int:
        return len(self.ids)


class Recording(DataKind):
    """A CSV of ``id,value,label`` rows: learns the training rows' mean and class names,
    and records the rows it was fitted on."""

    name = "recording"
    path_settings = ("path",)

    def __init__(self, path: str, scale: float = 1.0) -> None:
        self.path, self.scale = path, scale

    def read(self, path: str | None = None) -> Source:
        where = path or self.path
        with open(where, encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        bad = [Problem(where, "not a number", i + 1, "value") for i, r in enumerate(rows)]
        bad = [p for p, r in zip(bad, rows) if not r[1].lstrip("-").replace(".", "").isdigit()]
        if bad:
            raise DataError(bad)
        return _Rows([r[0] for r in rows], [float(r[1]) for r in rows], [r[2] for r in rows])

    def fit(self, source, train):
        fitted_rows.append(list(train))
        values = source.values[list(train)]
        classes = sorted({source.labels[i] for i in train})
        return {"mean": float(values.mean()), "classes": classes}

    def _x(self, source, state, rows):
        x = (source.values[rows] - np.float32(state["mean"])) * np.float32(self.scale)
        return wrap(x.reshape(-1, 1).repeat(2, axis=1))

    def samples(self, source, state, rows=None, train=False):
        rows = list(range(len(source))) if rows is None else list(rows)
        y = np.array([state["classes"].index(source.labels[i]) for i in rows], np.int64)
        return TensorDataset(self._x(source, state, rows), wrap(y))

    def inputs(self, source, state):
        return TensorDataset(self._x(source, state, list(range(len(source)))))

    def names(self, source):
        return list(source.ids)

    def class_names(self, state):
        return list(state["classes"])

    def sizes(self, state):
        return {"classes": len(state["classes"])}


@pytest.fixture
def recording(monkeypatch):
    """The stand-in kind, registered for one test."""
    monkeypatch.setitem(KINDS, "recording", Recording)
    fitted_rows.clear()
    return Recording


def _table(path, n=40, seed=0):
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(size=n) * 3, 3)
    labels = np.where(values > 0, "pos", "neg")
    with open(path, "w", encoding="utf-8") as fh:
        for i, (v, lab) in enumerate(zip(values, labels)):
            fh.write(f"r{i},{v},{lab}\n")
    return values.astype(np.float32), labels


CONFIG = """
name: rec
seed: 4
data: {{dataset: recording, path: {path}, scale: 0.5, test_split: 0.25, val_split: 0.2}}
model:
  - {{type: Linear, in_features: auto, out_features: 2}}
optimizer: {{type: Adam, lr: 0.1}}
train: {{epochs: 2, batch_size: 8}}
"""


def _split_rows(n, seed, test_frac, val_frac):
    """(train, val, test) rows as the run splits them: test carved first, then val."""
    from autogradcli import data as D

    k = round(n * test_frac)
    rest, test = D.random_split(list(range(n)), [n - k, k], generator=D.Generator(seed))
    rest = list(rest.indices)
    m = round(len(rest) * val_frac)
    tr, va = D.random_split(rest, [len(rest) - m, m], generator=D.Generator(seed))
    return [rest[i] for i in tr.indices], [rest[i] for i in va.indices], list(test.indices)


def test_the_config_reads_a_kinds_settings_from_its_signature(recording, tmp_path):
    from autogradcli.config import ConfigError, load_config
    from autogradcli.config.schema import DATASETS

    assert DATASETS["recording"]["scale"] == 1.0 and "recording" in list(DATASETS)
    _table(tmp_path / "t.csv")
    cfg = write(tmp_path / "c.yaml", "data: {dataset: recording, path: t.csv}\nmodel: [ReLU]\n")
    assert load_config(cfg).data["data"]["scale"] == 1.0  # the default, from __init__
    bad = write(
        tmp_path / "b.yaml", "data: {dataset: recording, scal: 2, scale: x}\nmodel: [ReLU]\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    text = str(info.value)
    assert "b.yaml:1:" in text and "needs 'path'" in text
    assert "'scal'" in text and "did you mean 'scale'" in text and "data.scale" in text


def test_fit_sees_the_training_rows_only(recording, tmp_path):
    from autogradcli.config import build_experiment, load_config

    values, _ = _table(tmp_path / "t.csv")
    exp = build_experiment(load_config(write(tmp_path / "c.yaml", CONFIG.format(path="t.csv"))))
    train, val, test = _split_rows(40, 4, 0.25, 0.2)
    assert (len(train), len(val), len(test)) == (24, 6, 10)
    assert [train] == fitted_rows  # one fit, on exactly the training rows
    assert not set(fitted_rows[0]) & (set(val) | set(test))
    state = exp.data_state["state"]
    assert state["mean"] == pytest.approx(float(values[train].mean()), rel=1e-6)
    # validation and test samples are the other rows, transformed with the training mean
    val_x = np.concatenate([b[0].numpy() for b in exp.val_loader])[:, 0]
    want = (values[val] - np.float32(state["mean"])) * np.float32(0.5)
    np.testing.assert_allclose(val_x, want, rtol=1e-6)
    assert len(exp.test_loader.dataset) == 10


def test_a_data_error_is_located_at_the_data_setting(recording, tmp_path):
    from autogradcli.config import ConfigError, build_experiment, load_config

    (tmp_path / "t.csv").write_text("a,1,x\nb,oops,y\nc,2,x\nd,nan?,y\n")
    cfg = write(tmp_path / "c.yaml", CONFIG.format(path="t.csv"))
    with pytest.raises(ConfigError) as info:
        build_experiment(load_config(cfg))
    text = str(info.value)
    assert "c.yaml:3:28  data.path: cannot load the data:" in text
    assert "t.csv, row 2, column 'value': not a number" in text
    assert "t.csv, row 4, column 'value': not a number" in text  # every problem at once


def _train(capsys, tmp_path):
    cfg = write(tmp_path / "c.yaml", CONFIG.format(path="t.csv"))
    code, _, err = agrad(
        capsys, "train", cfg, "--progress", "none", "--runs-dir", str(tmp_path / "r")
    )
    assert code == 0, err
    (run,) = glob.glob(str(tmp_path / "r" / "rec-*"))
    return run


def test_state_round_trips_and_eval_predict_need_no_training_file(recording, tmp_path, capsys):
    values, labels = _table(tmp_path / "t.csv")
    run = _train(capsys, tmp_path)
    with open(os.path.join(run, "data_state.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    train, _, _ = _split_rows(40, 4, 0.25, 0.2)
    assert doc["dataset"] == "recording"
    assert doc["state"] == {
        "mean": pytest.approx(float(values[train].mean()), rel=1e-6),
        "classes": sorted(set(labels[train])),
    }
    assert doc["sample"]["x"] == {"shape": [8, 2], "dtype": "float32"}
    os.remove(tmp_path / "t.csv")  # eval --data and predict never read it
    new_values, _ = _table(tmp_path / "new.csv", n=9, seed=3)
    fitted_rows.clear()
    code, out, err = agrad(capsys, "eval", run, "--data", str(tmp_path / "new.csv"), "--json")
    assert code == 0, err
    assert json.loads(out)["samples"] == 9
    out_csv = str(tmp_path / "p.csv")
    code, _, err = agrad(
        capsys, "predict", run, "--input", str(tmp_path / "new.csv"), "--output", out_csv
    )
    assert code == 0, err
    code, out, err = agrad(capsys, "inspect", run, "--json")
    assert code == 0, err
    assert json.loads(out)["summary"]["input_shape"] == ["B", 2]
    assert fitted_rows == []  # the stored state was used, nothing was fitted again
    with open(out_csv, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["name"] for r in rows] == [f"r{i}" for i in range(9)]
    assert [r["class"] for r in rows] == [doc["state"]["classes"][int(r["pred"])] for r in rows]
    import autogradcli

    model = autogradcli.load_run(run)
    x = (new_values - np.float32(doc["state"]["mean"])) * np.float32(0.5)
    logits = model(autogradcli.tensor(np.stack([x, x], 1))).detach().numpy()
    assert [int(r["pred"]) for r in rows] == logits.argmax(1).tolist()
    # the test split needs the rows it was carved from: a located error, not a traceback
    code, _, err = agrad(capsys, "eval", run)
    assert code == 2 and "t.csv" in err and "Traceback" not in err


def test_resume_uses_the_stored_state(recording, tmp_path, capsys):
    _table(tmp_path / "t.csv")
    run = _train(capsys, tmp_path)
    fitted_rows.clear()
    code, _, err = agrad(
        capsys, "train", "--resume", run, "--set", "train.epochs=3", "--progress", "none"
    )
    assert code == 0, err
    assert fitted_rows == []


FUNCTIONS = """
import os
import pathlib

import numpy as np

from autogradcli.data.dataset import TensorDataset
from autogradcli.tensor.tensor import wrap


def _load(path):
    rows = np.loadtxt(path, delimiter=",", ndmin=2).astype(np.float32)
    return TensorDataset(wrap(rows[:, :-1]), wrap(rows[:, -1].astype(np.int64)))


def annotated(path: pathlib.Path, other: "os.PathLike | None" = None, tag: str = "t.csv"):
    assert tag == "t.csv"  # not a path: passed as written
    return _load(path)


def declared(path, n=1):
    return _load(path)


declared.path_settings = ("path",)
"""


@pytest.mark.parametrize("fn", ["annotated", "declared"])
def test_a_dataset_functions_path_arguments_follow_the_path_rule(tmp_path, monkeypatch, fn):
    """``path`` written in the config is relative to the config's folder (not the working
    directory), whether declared by annotation or by ``path_settings``; config.resolved.yaml
    records the absolute path that was read; an argument that is not a path is untouched."""
    import yaml

    from autogradcli.config import build_experiment, load_config

    conf = tmp_path / "conf"
    conf.mkdir()
    write(conf / "fns.py", FUNCTIONS)
    rng = np.random.default_rng(0)
    np.savetxt(
        conf / "t.csv",
        np.column_stack([rng.normal(size=(20, 2)), np.arange(20) % 2]),
        delimiter=",",
    )
    extra = ", tag: t.csv" if fn == "annotated" else ""
    cfg = write(
        conf / "c.yaml",
        f"data: {{dataset: fns.py:{fn}, path: t.csv{extra}}}\n"
        "model: [{type: Linear, in_features: auto, out_features: 2}]\n",
    )
    monkeypatch.chdir(tmp_path)  # t.csv is not here: only the config-relative rule finds it
    config = load_config(cfg)
    exp = build_experiment(config)
    assert len(exp.train_loader.dataset) == 16
    assert exp.data_state["state"] == {}  # a dataset function's kind learns nothing
    resolved = yaml.safe_load(config.to_yaml(absolute_paths=True))["data"]
    assert resolved["path"] == str(conf / "t.csv")
    if fn == "annotated":
        assert resolved["tag"] == "t.csv"
    bad = write(conf / "b.yaml", f"data: {{dataset: fns.py:{fn}, path: 3}}\nmodel: [ReLU]\n")
    from autogradcli.config import ConfigError

    with pytest.raises(ConfigError, match=r"b.yaml:1:\d+  data.path: "):
        load_config(bad)


class Sized(Recording):
    """The stand-in, declaring a vocabulary too (as a text kind would)."""

    name = "sized"

    def sizes(self, state):
        return {"classes": len(state["classes"]), "vocab": 7}

    def _x(self, source, state, rows):
        ids = (np.abs(source.values[rows]) * 10).astype(np.int64) % 7  # token ids < vocab
        return wrap(ids.reshape(-1, 1).repeat(2, axis=1))


MODEL_AUTO = """
data: {{dataset: {kind}, path: t.csv}}
model:
  - {{type: Linear, in_features: auto, out_features: {hidden}}}
  - {{type: Linear, in_features: auto, out_features: auto}}
"""


def test_auto_sizes_come_from_the_kind(recording, monkeypatch, tmp_path):
    """out_features: auto on the last layer is sizes()['classes'] (2 here: pos, neg);
    num_embeddings: auto is sizes()['vocab']; a kind without the size, or out_features: auto
    before the last layer, is a located error."""
    from autogradcli.config import ConfigError, build_experiment, load_config

    monkeypatch.setitem(KINDS, "sized", Sized)
    _table(tmp_path / "t.csv")
    cfg = write(tmp_path / "c.yaml", MODEL_AUTO.format(kind="recording", hidden=5))
    exp = build_experiment(load_config(cfg))
    assert exp.model[1].out_features == 2 and exp.output_shape == (2,)
    emb = MODEL_AUTO.format(kind="sized", hidden=5).replace(
        "  - {type: Linear, in_features: auto, out_features: 5}",
        "  - Flatten\n  - {type: Embedding, num_embeddings: auto, embedding_dim: 3}\n  - Flatten",
    )
    (tmp_path / "e.yaml").write_text(emb)
    exp = build_experiment(load_config(str(tmp_path / "e.yaml")))
    assert exp.model[1].num_embeddings == 7 and exp.model[3].out_features == 2

    no_vocab = write(tmp_path / "v.yaml", emb.replace("dataset: sized", "dataset: recording"))
    with pytest.raises(
        ConfigError,
        match=r"v.yaml:4:23  model.1.num_embeddings: "
        r"num_embeddings: auto is the data's vocab count, which dataset "
        r"'recording' does not know",
    ):
        build_experiment(load_config(no_vocab))
    early = write(tmp_path / "o.yaml", MODEL_AUTO.format(kind="recording", hidden="auto"))
    with pytest.raises(ConfigError, match=r"o.yaml:3:\d+  model.0.out_features: .*only the last"):
        build_experiment(load_config(early))
    sine = write(
        tmp_path / "s.yaml", MODEL_AUTO.format(kind="sine", hidden=4).replace(", path: t.csv", "")
    )
    with pytest.raises(ConfigError, match="classes count, which dataset 'sine' does not know"):
        build_experiment(load_config(sine))


class OneClass(Recording):
    """The stand-in, refusing training rows of a single class while fitting."""

    name = "oneclass"

    def fit(self, source, train):
        state = super().fit(source, train)
        if len(state["classes"]) < 2:
            raise DataError([Problem(self.path, "the target has one class", column="label")])
        return state


def test_a_data_error_while_fitting_is_located(recording, monkeypatch, tmp_path):
    from autogradcli.config import ConfigError, build_experiment, load_config

    monkeypatch.setitem(KINDS, "oneclass", OneClass)
    (tmp_path / "t.csv").write_text("".join(f"r{i},{i},same\n" for i in range(20)))
    cfg = write(tmp_path / "c.yaml", CONFIG.format(path="t.csv").replace("recording", "oneclass"))
    with pytest.raises(ConfigError) as info:
        build_experiment(load_config(cfg))
    assert "c.yaml:3:27  data.path: cannot use the data: " in str(info.value)
    assert "t.csv, column 'label': the target has one class" in str(info.value)


def test_a_run_without_data_state_json_is_refitted_on_its_training_rows(
    recording, tmp_path, capsys
):
    """A run folder made before data_state.json existed: eval --data reads the training file
    and fits on the same training rows again (one fit), and still works."""
    _table(tmp_path / "t.csv")
    run = _train(capsys, tmp_path)
    os.remove(os.path.join(run, "data_state.json"))
    fitted_rows.clear()
    _table(tmp_path / "new.csv", n=5, seed=2)
    code, out, err = agrad(capsys, "eval", run, "--data", str(tmp_path / "new.csv"), "--json")
    assert code == 0, err
    assert json.loads(out)["samples"] == 5
    train, _, _ = _split_rows(40, 4, 0.25, 0.2)
    assert fitted_rows == [train]


def test_data_state_sample_size_limit(tmp_path):
    """A stored build batch of 2**26 numbers (just inside) is read; one more is refused."""
    from autogradcli.trainer.run_dir import RunDir, RunFolderError

    run = RunDir(str(tmp_path))
    y = {"shape": [8], "dtype": "int64"}
    for shape, ok in (([8, 2**23], True), ([8, 2**23 + 1], False), ([2**26 + 1], False)):
        run.write_data_state(
            {"state": {}, "sample": {"x": {"shape": shape, "dtype": "float32"}, "y": y}}
        )
        if ok:
            assert run.read_data_state()["sample"]["x"]["shape"] == shape
        else:
            with pytest.raises(RunFolderError, match="too large for a build batch"):
                run.read_data_state()
