"""autogradcli.multiprocessing: shared-memory tensors seen by other processes, tensors through
queues and spawn arguments, and spawn's error reporting, each against torch's behaviour."""

from __future__ import annotations

import os
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import autogradcli
import autogradcli.multiprocessing as mp
import autogradcli.nn as nn


def _torch():
    """torch, once torch.multiprocessing (which registers torch's own reductions) is imported."""
    import torch

    return torch


def test_share_memory_moves_the_data_in_place_keeping_values_and_dtype():
    torch = pytest.importorskip("torch")
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    ours, theirs = autogradcli.tensor(data), torch.tensor(data)
    assert ours.is_shared() == theirs.is_shared() is False
    assert ours.share_memory_() is ours
    theirs.share_memory_()
    assert ours.is_shared() == theirs.is_shared() is True
    assert ours.dtype == autogradcli.float32
    np.testing.assert_array_equal(ours.numpy(), data)
    before = ours._data
    assert ours.share_memory_()._data is before  # a second call keeps the same memory


def test_share_memory_of_a_view_shares_its_base():
    base = autogradcli.arange(10.0)
    view = base[2:6]
    view.share_memory_()
    assert base.is_shared() and view.is_shared()
    view.add_(1.0)
    np.testing.assert_array_equal(base.numpy()[2:6], [3.0, 4.0, 5.0, 6.0])


def test_module_share_memory_shares_parameters_and_buffers():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())
    assert all(b.is_shared() for b in model.buffers())
    assert all(isinstance(p, nn.Parameter) for p in model.parameters())


def _add_in_child(t):
    t.add_(5.0)


def test_a_forked_child_writes_into_the_parents_shared_tensor():
    t = autogradcli.zeros(4).share_memory_()
    p = mp.get_context("fork").Process(target=_add_in_child, args=(t,))
    p.start()
    p.join()
    assert p.exitcode == 0
    np.testing.assert_array_equal(t.numpy(), [5.0] * 4)


def test_an_unshared_tensor_is_not_written_by_a_forked_child():
    t = autogradcli.zeros(4)  # the child writes its own copy-on-write pages
    p = mp.get_context("fork").Process(target=_add_in_child, args=(t,))
    p.start()
    p.join()
    np.testing.assert_array_equal(t.numpy(), [0.0] * 4)


def _train_step_in_child(model, results):
    weight = model.weight
    results.put((type(weight).__name__, weight.requires_grad, weight.is_shared()))
    with autogradcli.no_grad():
        weight.fill_(2.0)


def test_spawned_child_gets_the_shared_model_and_its_writes_come_back():
    model = nn.Linear(3, 2)
    model.share_memory()
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    p = ctx.Process(target=_train_step_in_child, args=(model, results))
    p.start()
    received = results.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0
    assert received == ("Parameter", True, True)
    np.testing.assert_array_equal(model.weight.detach().numpy(), np.full((2, 3), 2.0, np.float32))


def test_a_tensor_put_on_a_queue_moves_to_shared_memory_as_in_torch():
    pytest.importorskip("torch.multiprocessing")
    torch = _torch()

    ours, theirs = autogradcli.ones(3), torch.ones(3)
    ForkingPickler.dumps(ours)
    ForkingPickler.dumps(theirs)
    assert ours.is_shared() == theirs.is_shared() is True


def test_a_non_leaf_that_requires_grad_is_refused_with_torchs_message():
    pytest.importorskip("torch.multiprocessing")
    torch = _torch()

    x = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as theirs:
        ForkingPickler.dumps(x)
    y = autogradcli.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as ours:
        ForkingPickler.dumps(y)
    assert str(ours.value) == str(theirs.value)
    ForkingPickler.dumps(y.detach())  # the data alone is fine


def _record_index(i, folder):
    with open(os.path.join(folder, f"ran-{i}"), "w") as f:
        f.write(str(i))


def _fail_on_one(i):
    if i == 1:
        raise ValueError("bad batch in worker one")


def _exit_with_three(i):
    os._exit(3)


def test_spawn_runs_fn_with_each_index(tmp_path):
    assert mp.spawn(_record_index, args=(str(tmp_path),), nprocs=2, start_method="fork") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ran-0", "ran-1"]


def test_spawn_without_join_returns_the_context(tmp_path):
    ctx = mp.spawn(_record_index, args=(str(tmp_path),), nprocs=1, join=False, start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 1
    while not ctx.join():
        pass


def test_spawn_reraises_a_childs_exception_with_its_traceback():
    with pytest.raises(mp.ProcessRaisedException) as err:
        mp.spawn(_fail_on_one, nprocs=2, start_method="fork")
    assert err.value.error_index == 1
    message = str(err.value)
    assert "-- Process 1 terminated with the following error:" in message
    assert "ValueError: bad batch in worker one" in message


def test_spawn_reports_an_exit_code():
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3"):
        mp.spawn(_exit_with_three, nprocs=1, start_method="fork")


def test_sharing_strategies_as_torch_lists_them():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("telepathy")
