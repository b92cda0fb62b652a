"""CPU threads (backend/threads.py): torch's set/get_num_threads semantics, numpy's BLAS threads
through threadpoolctl, and ``agrad train --threads``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import threadpoolctl

import autogradcli as ag
from autogradcli.backend import threads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _restore_threads() -> Iterator[None]:
    before = ag.get_num_threads()
    with threadpoolctl.threadpool_limits(None):  # restores the BLAS threads on the way out
        yield
    threads._num_threads = before


# --- settings, against torch -------------------------------------------------------------------


def test_set_and_get_follow_torch() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        for n in (1, 3, 2):
            torch.set_num_threads(n)
            ag.set_num_threads(n)
            assert ag.get_num_threads() == torch.get_num_threads() == n
        ag.set_num_threads(np.int64(2))  # torch takes numpy integers too
        assert ag.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_bad_counts_raise_torchs_error(bad: Any) -> None:
    torch = pytest.importorskip("torch")
    before = ag.get_num_threads()
    for setter in ("set_num_threads", "set_num_interop_threads"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch, setter)(bad)
        with pytest.raises(RuntimeError) as ours:
            getattr(ag, setter)(bad)
        assert str(ours.value) == str(theirs.value)
    assert ag.get_num_threads() == before  # nothing changed


def test_set_num_threads_limits_numpys_blas() -> None:
    for n in (1, 2):
        ag.set_num_threads(n)
        blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        assert blas and all(i["num_threads"] == n for i in blas)


def test_interop_threads_set_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "_num_interop", None)
    assert ag.get_num_interop_threads() == (os.cpu_count() or 1)
    ag.set_num_interop_threads(3)
    assert ag.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        ag.set_num_interop_threads(2)
    assert ag.get_num_interop_threads() == 3


_PROBE = """
import json, sys
import {lib} as m
out = {{"threads": m.get_num_threads(), "interop": m.get_num_interop_threads(),
       "blas_lib": "threadpoolctl" in sys.modules}}
m.set_num_interop_threads(1)
try:
    m.set_num_interop_threads(1)
except RuntimeError as e:
    out["twice"] = str(e)
print(json.dumps(out))
"""


def _probe(lib: str, env_value: str | None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    if env_value is not None:
        env["OMP_NUM_THREADS"] = env_value
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-c", _PROBE.format(lib=lib)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env_value", [None, "1", str(len(os.sched_getaffinity(0)) + 3)])
def test_default_follows_omp_num_threads_as_torch(env_value: str | None) -> None:
    pytest.importorskip("torch")
    ours, theirs = _probe("autogradcli", env_value), _probe("torch", env_value)
    assert ours["threads"] == theirs["threads"]
    assert ours["interop"] == theirs["interop"]
    assert ours["twice"] == theirs["twice"]
    assert not ours["blas_lib"]  # import autogradcli leaves threadpoolctl alone


def test_default_ignores_what_is_not_a_positive_count(monkeypatch: pytest.MonkeyPatch) -> None:
    cores = len(os.sched_getaffinity(0))
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    for value, expected in (("abc", cores), ("0", cores), ("-2", cores), ("1", 1), ("", cores)):
        monkeypatch.setenv("OMP_NUM_THREADS", value)
        assert threads._default_threads() == expected


# --- agrad train --threads ---------------------------------------------------------------------


def test_agrad_train_sets_the_threads(capsys: Any, tmp_path: Any, monkeypatch: Any) -> None:
    from test_cli_helpers import TINY_CONFIG, agrad, write

    tiny = write(tmp_path / "tiny.yaml", TINY_CONFIG)
    seen: list[int] = []
    monkeypatch.setattr(threads, "set_num_threads", seen.append)
    # agrad runs in this process: start from the default, whatever earlier tests here set
    monkeypatch.setattr(threads, "_num_threads", threads._default_threads())
    code, _, err = agrad(capsys, "train", tiny, "--dry-run", "--threads", "3")
    assert code == 0, err
    assert seen == [3]
    code, _, err = agrad(capsys, "train", tiny, "--dry-run")  # default: the usable cores
    assert code == 0, err
    assert seen == [3, threads._default_threads()]
    code, _, err = agrad(capsys, "train", tiny, "--print-config", "--threads", "2")
    assert code == 0 and seen == [3, threads._default_threads()]  # nothing to compute
    code, _, err = agrad(capsys, "train", tiny, "--threads", "0")
    assert code == 2 and "--threads" in err and seen[2:] == []


def test_ranks_share_the_default_cores(monkeypatch: Any) -> None:
    from autogradcli.cli.train_cmd import set_threads

    seen: list[int] = []
    monkeypatch.setattr(threads, "set_num_threads", seen.append)
    monkeypatch.setattr(threads, "_num_threads", 4)
    assert [set_threads(None, 2), set_threads(None, 3), set_threads(None, 8)] == [2, 1, 1]
    assert set_threads(5, 2) == 5  # an explicit count is what each rank uses
    assert seen == [2, 1, 1, 5]
