"""``TableEmbeddings``: a table's ``encode: embedding`` columns fed to embeddings from a config.
The layout against the table by hand, the config-built model against a hand-written torch
model with identical weights, the penguins through ``agrad train``/``predict`` with an unseen
island checked against a numpy forward of the checkpoint, and the located config errors."""

from __future__ import annotations

import glob
import json
import math
import os
import shutil

import numpy as np
import pytest
from lazy_torch import torch
from table_files import penguins_csv
from test_cli_helpers import REPO, agrad

import autogradcli as ag
from autogradcli.config import build_experiment, load_config
from autogradcli.config.table_layers import TableEmbeddings, auto_embedding_dim
from autogradcli.data.kinds import KINDS

# A table whose embedding columns sit between other inputs: slots, by hand, are
# a: 0 | color (embedding): 1 | size (one-hot: unknown, L, S): 2, 3, 4 | shape (embedding): 5
TABLE = """a,color,size,shape,label
1.0,red,S,round,x
2.0,blue,L,square,y
3.0,red,L,round,x
4.0,green,S,,y
5.0,blue,S,square,x
6.0,green,L,round,y
7.0,red,S,square,x
8.0,blue,L,round,y
"""
COLUMNS = "{color: {type: category, encode: embedding}, shape: {type: category, encode: embedding}}"


def config_file(tmp_path, model: str, columns: str = COLUMNS, data: str = TABLE) -> str:
    """A config training on the table above (all rows: no split) with ``model``'s layers."""
    pytest.importorskip("pyarrow")
    (tmp_path / "t.csv").write_text(data, encoding="utf-8")
    path = tmp_path / "c.yaml"
    path.write_text(
        "name: t\nseed: 0\ndevice: cpu\n"
        f"data: {{dataset: table, path: t.csv, target: label, val_split: 0, columns: {columns}}}\n"
        f"model:\n{model}"
        "loss: CrossEntropyLoss\noptimizer: {type: SGD, lr: 0.5}\n"
        "train: {epochs: 1, batch_size: 8, shuffle: false}\n",
        encoding="utf-8",
    )
    return str(path)


MODEL = """  - {type: TableEmbeddings, embedding_dim: 3}
  - {type: Linear, in_features: auto, out_features: 5}
  - ReLU
  - {type: Linear, in_features: auto, out_features: auto}
"""


def test_auto_embedding_dim_is_half_the_rows_rounded_up_at_most_50():
    # rows -> dim by hand: ceil(n / 2), capped at 50 (reached at 99 and 100 rows)
    cases = {1: 1, 2: 1, 3: 2, 4: 2, 97: 49, 98: 49, 99: 50, 100: 50, 101: 50, 10_000: 50}
    assert {n: auto_embedding_dim(n) for n in cases} == cases


def test_table_sizes_give_each_embedding_columns_slot_and_rows(tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "t.csv").write_text(TABLE, encoding="utf-8")
    columns = {c: {"type": "category", "encode": "embedding"} for c in ("color", "shape")}
    table = KINDS["table"](path=str(tmp_path / "t.csv"), target="label", columns=columns)
    source = table.read()
    sizes = table.sizes(table.fit(source, range(len(source))))
    # color: blue, green, red (+ unknown) = 4 rows; shape: <missing>, round, square (+ unknown)
    assert sizes == {
        "classes": 2,
        "embeddings": {
            "width": 6,
            "columns": [
                {"name": "color", "slot": 1, "num_embeddings": 4},
                {"name": "shape", "slot": 5, "num_embeddings": 4},
            ],
        },
    }
    one_hot = KINDS["table"](path=str(tmp_path / "t.csv"), target="label")
    assert one_hot.sizes(one_hot.fit(source, range(len(source)))) == {"classes": 2}


def torch_table_net():
    """The model written by hand in torch: embeddings of slots 1 and 5 (4 rows, 3 wide), then
    slots 0 and 2-4, into Linear(3 + 3 + 4, 5), ReLU, Linear(5, 2); state-dict names as ours."""

    class Net(torch.nn.Sequential):
        def forward(self, x):
            e0, e1 = self[0].embeddings
            h = torch.cat([e0(x[:, 1].long()), e1(x[:, 5].long()), x[:, 0:1], x[:, 2:5]], dim=1)
            return self[3](self[2](self[1](h)))

    emb = torch.nn.Module()
    emb.embeddings = torch.nn.ModuleList([torch.nn.Embedding(4, 3), torch.nn.Embedding(4, 3)])
    return Net(emb, torch.nn.Linear(10, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))


def test_config_model_matches_a_hand_written_torch_model(tmp_path):
    exp = build_experiment(load_config(config_file(tmp_path, MODEL), []))
    theirs = torch_table_net()
    state = {k: ag.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    exp.model.load_state_dict(state)
    x, y = next(iter(exp.train_loader))
    assert tuple(x.shape) == (8, 6) and sorted(set(x.numpy()[:, 5].tolist())) == [1.0, 2.0, 3.0]
    tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())
    np.testing.assert_allclose(
        exp.model(x).detach().numpy(), theirs(tx).detach().numpy(), rtol=1e-5, atol=1e-6
    )
    topt = torch.optim.SGD(theirs.parameters(), lr=0.5)
    for _ in range(2):  # a step, then the loss after it
        exp.optimizer.zero_grad()
        loss = exp.loss_fn(exp.model(x), y)
        topt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(theirs(tx), ty)
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5)
        loss.backward()
        tloss.backward()
        exp.optimizer.step()
        topt.step()
    np.testing.assert_allclose(
        exp.model[0].embeddings[1].weight.detach().numpy(),
        theirs[0].embeddings[1].weight.detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_auto_and_one_wide_embeddings_and_the_input_width(tmp_path):
    model = MODEL.replace("embedding_dim: 3", "embedding_dim: auto")
    exp = build_experiment(load_config(config_file(tmp_path, model), []))
    assert [e.embedding_dim for e in exp.model[0].embeddings] == [2, 2]  # ceil(4 / 2)
    assert exp.model[1].in_features == 2 + 2 + 4
    omitted = MODEL.replace("{type: TableEmbeddings, embedding_dim: 3}", "TableEmbeddings")
    exp = build_experiment(load_config(config_file(tmp_path, omitted), []))
    assert [e.embedding_dim for e in exp.model[0].embeddings] == [2, 2]  # auto by default
    exp = build_experiment(load_config(config_file(tmp_path, MODEL), ["model.0.embedding_dim=1"]))
    assert exp.model[1].in_features == 1 + 1 + 4  # 1: the smallest width accepted


def test_an_unseen_category_is_looked_up_in_row_zero(tmp_path):
    exp = build_experiment(load_config(config_file(tmp_path, MODEL), []))
    layer = exp.model[0]
    x = ag.tensor(np.array([[0.5, 0, 1, 0, 0, 3], [0.5, 2, 1, 0, 0, 0]], np.float32))
    out = layer(x).detach().numpy()
    w0, w1 = (e.weight.detach().numpy() for e in layer.embeddings)
    want = np.array(
        [
            [*w0[0], *w1[3], 0.5, 1, 0, 0],  # color unknown: row 0
            [*w0[2], *w1[0], 0.5, 1, 0, 0],  # shape unknown: row 0
        ],
        np.float32,
    )
    np.testing.assert_array_equal(out, want)


# --- located config errors --------------------------------------------------------------


def train_error(capsys, path: str, *overrides: str) -> str:
    code, out, err = agrad(capsys, "train", path, "--runs-dir", os.path.dirname(path), *overrides)
    assert code == 2 and "Traceback" not in err, out + err
    return err


def test_on_data_without_embedding_columns_the_layer_is_a_located_error(capsys, tmp_path):
    path = config_file(tmp_path, MODEL, columns="{color: category}")
    err = train_error(capsys, path)
    assert "c.yaml:6:5  model.0: TableEmbeddings: dataset 'table' has no `encode: embedding`" in err
    digits = tmp_path / "d.yaml"
    digits.write_text(
        "data: {dataset: digits, flatten: true}\nmodel:\n" + MODEL + "loss: CrossEntropyLoss\n"
    )
    err = train_error(capsys, str(digits))
    assert (
        "d.yaml:3:5  model.0: TableEmbeddings: dataset 'digits' has no `encode: embedding`" in err
    )


def test_layer_settings_are_checked_where_written(capsys, tmp_path):
    path = config_file(tmp_path, MODEL)
    err = train_error(capsys, path, "--set", "model.0.embedding_dim=0")  # 1 is accepted above
    assert "model.0.embedding_dim: expected a positive integer, got 0" in err
    err = train_error(capsys, path, "--set", "model.0.layout=3")  # the data's, not the config's
    assert "model.0.layout: TableEmbeddings got an unexpected argument 'layout'" in err
    later = MODEL.splitlines(keepends=True)
    err = train_error(capsys, config_file(tmp_path, "".join([later[1], later[2], later[0]])))
    assert "model.2: TableEmbeddings cannot take an input of shape (8, 5)" in err
    assert "expected the table's 6 input slots" in err and "goes first in the layer list" in err


def test_the_layer_alone_needs_at_least_one_column():
    with pytest.raises(ValueError, match="no `encode: embedding` column"):
        TableEmbeddings(layout={"width": 3, "columns": []})
    with pytest.raises(ValueError, match="positive int or 'auto', got 0"):
        TableEmbeddings(
            0, layout={"width": 1, "columns": [{"name": "a", "slot": 0, "num_embeddings": 2}]}
        )


# --- the penguins, end to end ------------------------------------------------------------


def _forward(ckpt: dict, state: dict, row: dict) -> np.ndarray:
    """The shipped config's model on one raw row, in numpy from the checkpoint's weights and
    the stored state: island's embedding row, then the other columns encoded by hand."""
    w = {k: v.numpy() for k, v in ckpt["model"].items()}
    parts = []
    island = next(c for c in state["features"] if c["name"] == "island")
    vocab = island["vocab"]
    parts.append(
        w["0.embeddings.0.weight"][vocab.index(row["island"]) + 1 if row["island"] in vocab else 0]
    )
    for col in state["features"]:
        cell = row[col["name"]]
        if col["type"] == "number":
            value = col["fill"] if cell == "NA" else float(cell)
            parts.append([(value - col["center"]) / col["scale"]])
        elif col["encode"] == "one_hot":
            hot = np.zeros(col["width"], np.float32)
            value = col["fill"] if cell == "NA" else cell
            hot[col["vocab"].index(value) + 1 if value in col["vocab"] else 0] = 1
            parts.append(hot)
    h = np.maximum(np.concatenate(parts) @ w["1.weight"].T + w["1.bias"], 0)
    logits = h @ w["3.weight"].T + w["3.bias"]
    e = np.exp(logits - logits.max())
    return e / e.sum()


@pytest.mark.slow
def test_penguins_with_an_island_embedding_train_and_predict_raw_rows(capsys, tmp_path):
    """configs/penguins_embedding.yaml on the raw palmerpenguins CSV: test accuracy >= 0.95
    (measured: 0.9855, 68 of 69); predict on raw rows, one from an island never seen, equals
    a numpy forward of the best checkpoint with that island on embedding row 0."""
    data = str(tmp_path / "penguins.csv")
    shutil.copy(penguins_csv(), data)
    config = tmp_path / "pe.yaml"
    shutil.copy(os.path.join(REPO, "configs", "penguins_embedding.yaml"), config)
    runs = tmp_path / "runs"
    code, out, err = agrad(
        capsys, "train", str(config), "--set", f"data.path={data}", "--runs-dir", str(runs)
    )
    assert code == 0, out + err
    (run,) = glob.glob(str(runs / "*"))
    with open(os.path.join(run, "summary.json"), encoding="utf-8") as fh:
        test = json.load(fh)["test"]
    assert test["samples"] == 69 and test["test_acc"] >= 0.95
    os.remove(data)  # predict needs only the run folder
    header = "island,bill_length_mm,bill_depth_mm,flipper_length_mm,body_mass_g,sex"
    lines = ["Dream,50.0,19.5,NA,3950,male", "Atlantis,38.2,18.0,190,3600,NA"]
    new = tmp_path / "new.csv"
    new.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    preds = str(tmp_path / "preds.csv")
    code, out, err = agrad(capsys, "predict", run, "--input", str(new), "--output", preds)
    assert code == 0, out + err
    with open(os.path.join(run, "data_state.json"), encoding="utf-8") as fh:
        state = json.load(fh)["state"]
    assert "Atlantis" not in next(c for c in state["features"] if c["name"] == "island")["vocab"]
    ckpt = ag.load(os.path.join(run, "checkpoints", "best"))
    with open(preds, encoding="utf-8") as fh:
        got = [line.split(",") for line in fh.read().splitlines()[1:]]
    for line, pred in zip(lines, got):
        want = _forward(ckpt, state, dict(zip(header.split(","), line.split(","))))
        np.testing.assert_allclose([float(p) for p in pred[3:]], want, rtol=1e-4, atol=1e-6)
        assert pred[2] == state["target"]["classes"][int(np.argmax(want))]
    assert math.isclose(sum(float(p) for p in got[1][3:]), 1.0, rel_tol=1e-5)


def test_readme_excerpt_is_the_shipped_embedding_config():
    """The Tables section's second yaml block: lines of configs/penguins_embedding.yaml, in
    order (the excerpt leaves the run settings out)."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    section = readme[readme.index("### Tables: `dataset: table`") :]
    second = section.index("```yaml\n", section.index("```yaml\n") + 1) + 8
    block = section[second : section.index("```\n", second)].splitlines()
    with open(os.path.join(REPO, "configs", "penguins_embedding.yaml"), encoding="utf-8") as fh:
        lines = iter(fh.read().splitlines())
    assert "TableEmbeddings" in "\n".join(block)
    assert all(any(line == shipped for shipped in lines) for line in block)
