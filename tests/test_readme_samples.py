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
