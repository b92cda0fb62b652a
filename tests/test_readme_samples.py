"""Every sample output in README.md is what agrad prints now: each block marked
``<!-- sample:NAME -->`` equals a fresh run of its commands (docs/readme_samples.py, which also
rewrites the blocks), with only times, run ids and the temporary folder normalised."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _samples():
    spec = importlib.util.spec_from_file_location(
        "readme_samples", os.path.join(REPO, "docs", "readme_samples.py")
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


samples = _samples()


@pytest.mark.slow
@pytest.mark.parametrize("session", list(samples.SESSIONS))
def test_readme_block_is_what_agrad_prints(session):
    with open(samples.README, encoding="utf-8") as fh:
        readme = fh.read()
    for block, printed in samples.run_session(session).items():
        shown = samples.read_block(readme, block)
        assert shown is not None, f"README.md lacks {samples.BEGIN.format(block)}"
        assert shown == printed, f"README block {block!r} is stale: python docs/readme_samples.py"


def test_every_marked_block_has_a_session():
    """A marked block no session writes would never be checked."""
    with open(samples.README, encoding="utf-8") as fh:
        readme = fh.read()
    marked = {
        line.split()[1].split(":", 1)[1]
        for line in readme.split("\n")
        if "<!-- sample:" in line and "sample:end" not in line
    }
    written = {step.block for steps in samples.SESSIONS.values() for step in steps}
    assert marked == written


def test_normalise_keeps_what_a_run_determines():
    out = samples.normalise(
        "epoch 1/2  train_loss 1.4703  time 0.13s\nrun folder: /w/x/runs/d-20261127-073830-9fa85b  \n\n",
        "/w/x",
        "d-20261127-073830-9fa85b",
    )
    assert out == f"epoch 1/2  train_loss 1.4703  time 0.01s\nrun folder: runs/{samples.RUN_NAME}"
    row = "  d   12.5s   2026-01-02 03:04:05   x"
    assert samples.normalise(row, "/w", None) == "  d    0.6s   2026-11-24 00:40:51   x"


def _python_block(first_line: str) -> str:
    """The README's ```python block that starts with ``first_line``."""
    with open(samples.README, encoding="utf-8") as fh:
        readme = fh.read()
    start = readme.index(f"```python\n{first_line}\n") + len("```python\n")
    return readme[start : readme.index("```\n", start)]


def _printed_comments(code: str) -> list[str]:
    """What the block's ``print(...)  # shown`` lines say they print, in order."""
    return [line.split("  # ", 1)[1] for line in code.split("\n") if line.startswith("print(")]


def test_porting_example_prints_what_it_says(capsys):
    code = _python_block("import autogradcli as torch")
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.split("\n")[:-1] == _printed_comments(code) == ["True"]


@pytest.mark.slow
def test_load_run_example_prints_what_it_says(tmp_path, capsys):
    from autogradcli.trainer import train_from_config

    result = train_from_config(
        os.path.join(REPO, "configs", "digits_mlp.yaml"), progress="none", runs_dir=str(tmp_path)
    )
    code = _python_block("import autogradcli\nfrom autogradcli.data import load_digits")
    assert samples.RUN in code
    capsys.readouterr()
    exec(compile(code.replace(samples.RUN, result.run_dir), "README.md", "exec"), {})
    assert capsys.readouterr().out.split("\n")[:-1] == _printed_comments(code)
