"""Intra-op threads (backend/threads.py): torch's set/get_num_threads semantics, the pool's
slices, and bit-for-bit identical results and gradients whatever the thread count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import threadpoolctl

import autogradcli as ag
import autogradcli.nn.functional as F
from autogradcli.backend import threads

GRAIN = threads.GRAIN
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _restore_threads() -> Iterator[None]:
    before = ag.get_num_threads()
    with threadpoolctl.threadpool_limits(None):  # restores the BLAS threads on the way out
        yield
    threads._num_threads = before


def _pool_threads(n: int) -> None:
    """``n`` intra-op threads, BLAS on one: OpenBLAS's products themselves may differ in the last
    bit with its thread count (it splits some shapes' sums), which is not the pool's doing."""
    ag.set_num_threads(n)
    threadpoolctl.threadpool_limits(1, user_api="blas")


@pytest.fixture
def dispatches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of slices of every job the pool ran (an empty list: it never ran)."""
    seen: list[int] = []
    run = threads._Pool.run

    def counted(self: Any, body: Any, bounds: list[int]) -> None:
        seen.append(len(bounds) - 1)
        run(self, body, bounds)

    monkeypatch.setattr(threads._Pool, "run", counted)
    return seen


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
    monkeypatch.setattr(threads, "_interop_set", False)
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


# --- the pool ----------------------------------------------------------------------------------


def _slices(total: int, grain: int) -> list[tuple[int, int, str]]:
    seen: list[tuple[int, int, str]] = []
    lock = threading.Lock()

    def body(start: int, stop: int) -> None:
        with lock:
            seen.append((start, stop, threading.current_thread().name))

    threads.parallel_for(total, body, grain=grain)
    return sorted(seen)


G = 10


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("total", [0, 1, G - 1, G, G + 1, 2 * G - 1, 2 * G, 2 * G + 1, 3 * G + 1])
def test_slices_cover_every_unit_once(n_threads: int, total: int) -> None:
    ag.set_num_threads(n_threads)
    g = G
    seen = _slices(total, g)
    covered = [i for start, stop, _ in seen for i in range(start, stop)]
    assert covered == list(range(total))
    parts = max(1, min(n_threads, total // g)) if total else 0
    assert [s[:2] for s in seen] == [(total * k // parts, total * (k + 1) // parts) for k in
                                     range(parts)]  # fmt: skip
    if parts > 1:
        assert all(stop - start >= g for start, stop, _ in seen)
        assert seen[0][2] == threading.current_thread().name  # the caller takes slice 0
    else:
        assert all(name == threading.current_thread().name for *_, name in seen)  # inline


def test_workers_run_slices_while_the_caller_is_busy() -> None:
    ag.set_num_threads(3)
    others_started = threading.Barrier(3, timeout=30)  # slice 0 waits for slices 1 and 2
    names: dict[int, str] = {}

    def body(start: int, stop: int) -> None:
        names[start] = threading.current_thread().name
        others_started.wait()

    threads.parallel_for(30, body, grain=10)
    assert names[0] == threading.current_thread().name
    assert len({names[10], names[20], names[0]}) == 3  # three threads at once


def test_an_error_in_a_worker_slice_reaches_the_caller() -> None:
    ag.set_num_threads(2)
    worker_failed = threading.Event()
    finished = []

    def body(start: int, stop: int) -> None:
        if start > 0:  # the caller is held in slice 0 until this one started: a worker runs it
            worker_failed.set()
            raise ValueError(f"slice {start}:{stop} failed in {threading.current_thread().name}")
        assert worker_failed.wait(30)
        finished.append(start)

    with pytest.raises(ValueError, match="slice 50:100 failed in autogradcli-intraop"):
        threads.parallel_for(100, body, grain=10)
    assert finished == [0]  # the caller's slice ran to its end before the error was raised
    assert [s[:2] for s in _slices(100, 10)] == [(0, 50), (50, 100)]  # the pool still works


def test_an_error_in_the_callers_slice_waits_for_the_workers() -> None:
    ag.set_num_threads(2)
    running = threading.Event()
    finished = []

    def body(start: int, stop: int) -> None:
        if start == 0:
            running.wait(0.5)  # give the worker its chance to start (either order is valid)
            raise KeyError("caller")
        running.set()
        finished.append(start)

    with pytest.raises(KeyError, match="caller"):
        threads.parallel_for(100, body, grain=10)
    # a worker slice that started has finished (not still writing); one not started is skipped
    assert finished == ([50] if running.is_set() else [])
    assert [s[:2] for s in _slices(100, 10)] == [(0, 50), (50, 100)]


def test_nested_calls_run_inline(dispatches: list[int]) -> None:
    ag.set_num_threads(2)
    inner: list[tuple[int, int]] = []
    lock = threading.Lock()

    def body(start: int, stop: int) -> None:
        def leaf(a: int, b: int) -> None:
            with lock:
                inner.append((a, b))

        threads.parallel_for(stop - start, leaf, grain=1)

    threads.parallel_for(40, body, grain=10)
    assert dispatches == [2]  # the outer job only; the inner ones ran inline
    assert sorted(inner) == [(0, 20), (0, 20)]


# --- the ops: the same bits on 1, 2 and 3 threads ----------------------------------------------


def _grads(fn: Any, *arrays: np.ndarray, device: str = "cpu") -> list[bytes]:
    """``fn``'s output and its inputs' gradients (for a fixed random output gradient), as bytes."""
    ins = [ag.tensor(a, device=device, requires_grad=True) for a in arrays]
    out = fn(*ins)
    g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(ag.tensor(g, device=device))
    return [t.detach().cpu().numpy().tobytes() for t in (out, *(t.grad for t in ins))]


def _same_on_all_counts(fn: Any, *arrays: np.ndarray) -> list[bytes]:
    results = []
    for n in (1, 2, 3):
        _pool_threads(n)
        results.append(_grads(fn, *arrays))
    assert results[0] == results[1] == results[2]
    return results[0]


@pytest.mark.parametrize("size", [2 * GRAIN - 1, 2 * GRAIN, 3 * GRAIN + 7])
def test_relu_is_identical_on_any_count(size: int, dispatches: list[int]) -> None:
    x = np.random.default_rng(0).standard_normal(size).astype(np.float32)
    x[::7] = 0.0
    _same_on_all_counts(F.relu, x)
    assert bool(dispatches) == (size >= 2 * GRAIN)  # just below the grain: never split


def _conv_net(x: Any, w1: Any, w2: Any) -> Any:
    y = F.relu(F.conv2d(x, w1, padding=1))
    a = F.max_pool2d(y, 2)
    b = F.avg_pool2d(y, 3, stride=2, padding=1)
    c = F.conv2d(y, w2, stride=2, padding=2)  # the strided im2col/col2im
    return a.sum((2, 3)) + (b * b).mean((2, 3)) + c.mean((2, 3))


@pytest.mark.parametrize("batch", [1, 3, 4, 14, 40])
def test_conv_and_pooling_are_identical_on_any_count(batch: int, dispatches: list[int]) -> None:
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 1, 32, 32)).astype(np.float32)
    w1 = rng.standard_normal((4, 1, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((4, 4, 5, 5)).astype(np.float32) * 0.1
    ours = _same_on_all_counts(_conv_net, x, w1, w2)
    # the biggest work an image is conv2's columns, 4*5*5 rows of 16*16 (25600 elements): a
    # slice needs GRAIN // 25600 = 2 images, so the batch splits from 4 images on
    assert GRAIN // 25600 == 2
    assert bool(dispatches) == (batch >= 4)
    torch = pytest.importorskip("torch")
    tin = [torch.tensor(a, requires_grad=True) for a in (x, w1, w2)]
    tf = torch.nn.functional
    y = tf.relu(tf.conv2d(tin[0], tin[1], padding=1))
    out = (
        tf.max_pool2d(y, 2).sum((2, 3))
        + (tf.avg_pool2d(y, 3, stride=2, padding=1) ** 2).mean((2, 3))
        + tf.conv2d(y, tin[2], stride=2, padding=2).mean((2, 3))
    )
    g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(torch.tensor(g))
    for got, want in zip(ours, [out, *(t.grad for t in tin)]):
        want = want.detach().numpy()
        np.testing.assert_allclose(
            np.frombuffer(got, np.float32).reshape(want.shape), want, rtol=2e-4, atol=2e-4
        )


def _train_steps(n_threads: int) -> list[bytes]:
    _pool_threads(n_threads)
    ag.manual_seed(0)
    nn = ag.nn
    cnn = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(784, 10),
    )  # fmt: skip
    mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))
    rng = np.random.default_rng(0)
    xc = ag.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    xm = ag.tensor(rng.standard_normal((300, 784)).astype(np.float32))
    y = ag.tensor(rng.integers(0, 10, 64))
    ym = ag.tensor(rng.integers(0, 10, 300))
    params = list(cnn.parameters()) + list(mlp.parameters())
    opt = ag.optim.SGD(params, lr=0.05, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(cnn(xc), y) + F.cross_entropy(mlp(xm), ym)
        loss.backward()
        opt.step()
    return [p.detach().numpy().tobytes() for p in params]


def test_a_training_step_is_identical_on_any_count(dispatches: list[int]) -> None:
    one = _train_steps(1)
    assert not dispatches
    assert _train_steps(2) == one
    assert dispatches  # the pool did run
    assert _train_steps(3) == one


def test_the_strict_device_path_never_uses_the_pool(
    strict_cuda: Any, dispatches: list[int]
) -> None:
    ag.set_num_threads(2)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 1, 32, 32)).astype(np.float32)
    w1 = rng.standard_normal((4, 1, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((4, 4, 5, 5)).astype(np.float32) * 0.1
    relu_net = lambda a: F.relu(a.reshape(-1)) * 2
    device = _grads(_conv_net, x, w1, w2, device="cuda")
    device += _grads(relu_net, x.repeat(4, 0), device="cuda")
    assert not dispatches  # big enough to split on the host, and never split on the device
    host = _grads(_conv_net, x, w1, w2) + _grads(relu_net, x.repeat(4, 0))
    assert dispatches  # the same work on the host did split
    for got, want in zip(device, host):
        np.testing.assert_allclose(np.frombuffer(got, np.float32), np.frombuffer(want, np.float32))


# --- agrad train --threads ---------------------------------------------------------------------


def test_agrad_train_sets_the_threads(capsys: Any, tmp_path: Any, monkeypatch: Any) -> None:
    from test_cli_helpers import TINY_CONFIG, agrad, write

    tiny = write(tmp_path / "tiny.yaml", TINY_CONFIG)
    seen: list[int] = []
    monkeypatch.setattr(threads, "set_num_threads", seen.append)
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
