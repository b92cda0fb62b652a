""".ci/run runs the README's test command plus lint, and its exit code is pytest's: "no tests
collected" (5) fails the build instead of passing as green. Checked with stand-ins for python3
and ruff on PATH, so nothing is installed or run for real."""

from __future__ import annotations

import os
import re
import stat
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CI = os.path.join(REPO, ".ci", "run")


def _stub(folder, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "{name} $*" >> "{folder}/calls"\n{body}\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize("pytest_rc", [0, 1, 5])
def test_exit_code_is_pytests(tmp_path, pytest_rc):
    _stub(tmp_path, "python3", f'case "$*" in *pytest*) exit {pytest_rc};; esac; exit 0')
    _stub(tmp_path, "ruff", "exit 0")
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    res = subprocess.run(["bash", CI], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == pytest_rc
    assert ("collected no tests" in res.stderr) == (pytest_rc == 5)
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == [
        "python3 -m pip install -e .[test]",
        "ruff check .",
        "ruff format --check .",
        "python3 -m pytest",
    ]


def test_runs_the_readmes_test_command():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    command = re.search(r'```bash\n(python3 -m pip install -e "\.\[test\]".*)\n```', readme)[1]
    with open(CI, encoding="utf-8") as fh:
        script = fh.read()
    for part in command.split(" && "):
        assert re.search(rf"^{re.escape(part)}( |$)", script, re.M), part
