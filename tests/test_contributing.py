"""CONTRIBUTING.md's worked examples are the project's real code, so they cannot drift from it."""

from __future__ import annotations

import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _section(title: str) -> str:
    """The text of CONTRIBUTING.md's ``## title`` section."""
    with open(os.path.join(REPO, "CONTRIBUTING.md"), encoding="utf-8") as fh:
        text = fh.read()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _code_lines(code: str) -> list[str]:
    """``code``'s lines with end-of-line comments and trailing blanks removed."""
    return [re.sub(r"\s+# .*$", "", line).rstrip() for line in code.split("\n")]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack)))


def test_adding_an_op_shows_the_real_logexp_module():
    blocks = re.findall(r"```python\n(.*?)```", _section("Adding an op"), re.S)
    with open(os.path.join(REPO, "autogradcli", "ops", "logexp.py"), encoding="utf-8") as fh:
        source = _code_lines(fh.read())
    assert len(blocks) == 2
    for block in blocks:
        lines = _code_lines(block.rstrip("\n"))
        assert _contains(source, lines), f"not in ops/logexp.py:\n{block}"


def test_adding_an_op_names_modules_that_exist():
    section = _section("Adding an op")
    for name in re.findall(r"`ops/(\w+)\.py`", section):
        assert os.path.exists(os.path.join(REPO, "autogradcli", "ops", f"{name}.py")), name
    from autogradcli.ops import logexp, unary

    assert "log1p" in logexp.__all__ and not hasattr(unary, "__all__")


def test_adding_a_data_kind_example_runs(tmp_path, monkeypatch):
    """The "Adding a data kind" example, executed as a module of data/kinds, registered, and
    trained from its YAML: fit sees the training rows only and predictions name classes."""
    import sys
    import types

    import numpy as np

    from autogradcli.config import build_experiment, load_config
    from autogradcli.data import kinds

    section = _section("Adding a data kind (worked example: labelled 2-D points)")
    code, registration, config = re.findall(r"```(?:python|yaml)\n(.*?)```", section, re.S)
    module = types.ModuleType("autogradcli.data.kinds.points")
    module.__package__ = "autogradcli.data.kinds"
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, "CONTRIBUTING.md", "exec"), module.__dict__)
    monkeypatch.setitem(kinds.KINDS, "points", module.PointsKind)
    assert registration.strip() == "register_kind(PointsKind)"

    rng = np.random.default_rng(0)
    xy = rng.normal(size=(50, 2)) * [3.0, 0.5] + [10.0, -2.0]
    labels = np.where(xy[:, 0] > 10.0, "east", "west")
    with open(tmp_path / "points.csv", "w", encoding="utf-8") as fh:
        fh.writelines(f"{a},{b},{c}\n" for (a, b), c in zip(xy, labels))
    (tmp_path / "c.yaml").write_text(config)
    exp = build_experiment(load_config(str(tmp_path / "c.yaml")))
    from autogradcli import data as D

    rest, _ = D.random_split(list(range(50)), [40, 10], generator=D.Generator(0))
    tr, _ = D.random_split(list(rest.indices), [32, 8], generator=D.Generator(0))
    train = [rest.indices[i] for i in tr.indices]
    state = exp.data_state["state"]
    np.testing.assert_allclose(state["mean"], xy[train].mean(0))  # training rows only
    np.testing.assert_allclose(state["std"], xy[train].std(0))
    assert state["classes"] == sorted(set(labels[train]))
    assert exp.model[2].out_features == len(state["classes"])
