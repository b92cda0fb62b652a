"""autogradcli.futures against torch.futures: completion, errors, chaining and collection."""

from __future__ import annotations

import threading
import time

import pytest

from autogradcli import futures


def _both():
    torch = pytest.importorskip("torch")
    return [(futures, "ours"), (torch.futures, "torch")]


def _error(fn):
    try:
        fn()
    except Exception as error:
        return type(error), str(error).split("\n")[0]
    return None


def test_results_errors_and_chaining_match_torch():
    seen = {}
    for mod, name in _both():
        f, g = mod.Future(), mod.Future()
        assert not f.done()
        f.set_result(3)
        g.set_exception(ValueError("x"))
        h = f.then(lambda fut: fut.wait() * 2)
        k = g.then(lambda fut: fut.wait() * 2)
        seen[name] = (
            f.done(),
            f.wait(),
            f.value(),
            h.wait(),
            _error(lambda f=f: f.set_result(4)),
            _error(g.wait),
            _error(g.value),
            _error(k.wait),
            _error(lambda mod=mod: mod.Future().set_exception(3)),
            mod.wait_all([f, h]),
            _error(lambda mod=mod, f=f, g=g: mod.wait_all([f, g])),
            [x.wait() for x in mod.collect_all([f, h]).wait()],
        )
    assert seen["ours"] == seen["torch"]
    assert seen["ours"][7] == (
        RuntimeError,
        "Got the following error when running the callback: ValueError: x",
    )


def test_wait_blocks_until_another_thread_completes_it():
    fut = futures.Future()
    calls = []
    fut.add_done_callback(lambda f: calls.append(f.value()))
    timer = threading.Timer(0.05, fut.set_result, args=("late",))
    start = time.monotonic()
    timer.start()
    assert fut.wait() == "late"
    assert time.monotonic() - start >= 0.04
    assert calls == ["late"]
    fut.add_done_callback(lambda f: calls.append("now"))  # already done: runs at once
    assert calls == ["late", "now"]


def test_collect_all_completes_only_after_the_last_future():
    a, b = futures.Future(), futures.Future()
    both = futures.collect_all([a, b])
    a.set_result(1)
    assert not both.done()
    b.set_exception(KeyError("k"))
    assert both.done()
    assert both.wait() == [a, b]  # collect_all itself succeeds; each future keeps its error
    with pytest.raises(KeyError):
        both.wait()[1].wait()
    assert futures.collect_all([]).wait() == []


def test_a_failing_done_callback_warns_and_does_not_stop_the_others():
    fut = futures.Future()
    calls = []
    fut.add_done_callback(lambda f: 1 / 0)
    fut.add_done_callback(lambda f: calls.append(1))
    with pytest.warns(RuntimeWarning, match="ZeroDivisionError"):
        fut.set_result(None)
    assert calls == [1]


def test_value_of_a_pending_future_raises():
    with pytest.raises(RuntimeError):
        futures.Future().value()
