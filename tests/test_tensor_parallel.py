"""Tensor parallelism (distributed.tensor.parallel, DTensor, DeviceMesh): on 2 ranks under mpiexec
against the unsharded model in one process (tests/programs/distributed/tp_worker.py); on one
rank in this process, against the plain module; bad plans and meshes; names and reprs as torch's."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import test_fsdp
from programs.distributed.mpirun import ROOT, check, run_mpi

import autogradcli as ag
import autogradcli.nn as nn
from autogradcli.distributed import process_group
from autogradcli.distributed.backend_base import Pending
from autogradcli.distributed.device_mesh import init_device_mesh
from autogradcli.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from autogradcli.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)


class Solo(test_fsdp.Solo):
    """test_fsdp's one-rank group, with the all-gather ``full_tensor`` needs."""

    def all_gather(self, out, arr, *name):
        out[0] = arr
        return Pending(lambda: None)

    def reduce_scatter(self, out, arr, op, *name):
        out[...] = arr
        return Pending(lambda: None)


@pytest.fixture
def solo(monkeypatch):
    monkeypatch.setattr(process_group.STATE, "backend", Solo())
    return init_device_mesh("cpu", (1,))


class Toy(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(10, 32)
        self.relu = nn.ReLU()
        self.out_proj = nn.Linear(32, 5)

    def forward(self, x):
        return self.out_proj(self.relu(self.in_proj(x)))


PLAN = {"in_proj": ColwiseParallel(), "out_proj": RowwiseParallel()}


@pytest.mark.mpi
def test_two_ranks_equal_the_unsharded_model_in_one_process():
    out = check(run_mpi(2, "tp_worker.py", timeout=120))
    for tag in ("toy", "uneven"):
        assert f"{tag}: outputs, gradients and SGD steps equal one process" in out, out
    assert "sequence parallel: rows, gradients and SGD steps equal one process" in out, out
    assert "state_dict: local shards (16, 10)" in out, out
    assert "example loop: AdamW foreach on DTensor parameters ran" in out, out


def _readme_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("```python\n# mpiexec -n 2 python tp_demo.py") + len("```python\n")
    return readme[start : readme.index("```\n", start)]


def _check_example_output(out: str) -> None:
    for r in (0, 1):
        assert f"rank {r}: local (16, 10), full (32, 10)" in out, out


@pytest.mark.mpi
def test_readme_example_runs_on_two_ranks(tmp_path):
    prog = tmp_path / "tp_demo.py"
    prog.write_text(_readme_example())
    _check_example_output(check(run_mpi(2, prog, timeout=120)))


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("AGRAD_TORCHRUN") != "1", reason="set AGRAD_TORCHRUN=1 (starts torchrun)"
)
def test_the_readme_example_is_pytorch_code(tmp_path):
    pytest.importorskip("torch")
    prog = tmp_path / "tp_demo_torch.py"
    prog.write_text(_readme_example().replace("autogradcli", "torch"))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    out = subprocess.run(cmd + [str(prog)], capture_output=True, text=True, timeout=180)
    _check_example_output(out.stdout)  # torch's gloo may abort in its teardown afterwards


def test_world_size_one_is_the_plain_module(solo):
    ag.manual_seed(0)
    plain = Toy()
    tp = Toy()
    tp.load_state_dict(plain.state_dict())
    assert parallelize_module(tp, solo, PLAN) is tp
    w, b = tp.in_proj.weight, tp.out_proj.bias
    assert isinstance(w, DTensor) and isinstance(w, nn.Parameter)
    assert w.placements == (Shard(0),) and b.placements == (Replicate(),)
    assert tp.out_proj.weight.placements == (Shard(1),) and w.device_mesh == solo
    assert tuple(w.to_local().shape) == (32, 10) and type(w.to_local()) is ag.Tensor
    x = ag.rand(4, 10)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    out_a, out_b = plain(xa), tp(xb)
    assert np.array_equal(out_a.detach().numpy(), out_b.detach().numpy())
    out_a.pow(2).sum().backward()
    out_b.pow(2).sum().backward()
    assert np.array_equal(xa.grad.numpy(), xb.grad.numpy())
    for (name, p), q in zip(plain.named_parameters(), tp.parameters()):
        assert np.array_equal(p.grad.numpy(), q.grad.numpy()), name
        assert np.array_equal(p.detach().numpy(), q.full_tensor().detach().numpy()), name
    g = tp.in_proj.weight.grad
    assert isinstance(g, DTensor) and g.placements == (Shard(0),) and g is tp.in_proj.weight.grad
    assert list(tp.state_dict()) == list(plain.state_dict())
    assert "Linear(in_features=10, out_features=32, bias=True)" in repr(tp)


def test_sequence_parallel_on_one_rank_is_the_plain_module(solo):
    ag.manual_seed(0)
    plain, sp = Toy(), Toy()
    sp.load_state_dict(plain.state_dict())
    plan = {
        "in_proj": ColwiseParallel(input_layouts=Shard(0)),
        "out_proj": RowwiseParallel(output_layouts=Shard(0)),
    }
    parallelize_module(sp, solo, plan)
    assert repr(plan["in_proj"]).startswith("ColwiseParallel(input_layouts=(Shard(dim=0),)")
    x = ag.rand(3, 10)
    out_a, out_b = plain(x), sp(x)
    assert np.array_equal(out_a.detach().numpy(), out_b.detach().numpy())
    out_a.sum().backward()
    out_b.sum().backward()
    for p, q in zip(plain.parameters(), sp.parameters()):
        assert np.array_equal(p.grad.numpy(), q.grad.numpy())


def test_distribute_tensor_and_full_tensor_gradient(solo):
    t = ag.arange(6.0).reshape(2, 3).requires_grad_()
    d = distribute_tensor(t, solo, [Shard(1)])
    assert d.placements == (Shard(1),) and d.requires_grad
    full = d.full_tensor()
    assert np.array_equal(full.detach().numpy(), t.detach().numpy())
    (full * ag.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert np.array_equal(d.grad.numpy(), [[1.0, 2.0, 3.0]] * 2)
    with pytest.raises(IndexError, match=r"Shard\(dim=2\) is out of range for a 2-D tensor"):
        distribute_tensor(t, solo, [Shard(2)])
    assert "placements=(Shard(dim=1),)" in repr(DTensor.from_local(t.detach(), solo, [Shard(1)]))


def test_full_tensor_on_the_strict_device(solo, strict_cuda):
    m = parallelize_module(nn.Linear(3, 4, bias=False).to("cuda"), solo, ColwiseParallel())
    full = m.weight.full_tensor()
    assert full.device.type == "cuda" and m.bias is None
    m(ag.ones(2, 3, device="cuda")).sum().backward()
    assert np.array_equal(
        ag.backend.to_numpy(m.weight.grad.full_tensor()._data), np.full((4, 3), 2.0)
    )


@pytest.mark.parametrize(
    "plan, error, words",
    [
        (
            {"in_proj": ColwiseParallel(), "nope": ColwiseParallel()},
            ValueError,
            "names submodule 'nope', which Toy does not have",
        ),
        (
            {"in_proj": ColwiseParallel(), "relu": ColwiseParallel()},
            NotImplementedError,
            "ColwiseParallel currently only",
        ),
        ({"relu": RowwiseParallel()}, NotImplementedError, "submodule 'relu' of type ReLU"),
        ({"in_proj": "colwise"}, TypeError, "entry 'in_proj' must be a ParallelStyle, got str"),
        (ColwiseParallel(), NotImplementedError, "only supports nn.Linear here"),
    ],
)
def test_bad_plans_are_named_and_change_nothing(solo, plan, error, words):
    m = Toy()
    before = {k: v.clone() for k, v in m.state_dict().items()}
    with pytest.raises(error, match=words):
        parallelize_module(m, solo, plan)
    assert not any(isinstance(p, DTensor) for p in m.parameters())
    assert all(ag.equal(before[k], v) for k, v in m.state_dict().items())


def test_rowwise_input_of_the_wrong_width_is_named(solo):
    m = parallelize_module(nn.Linear(4, 2), solo, RowwiseParallel())
    m(ag.rand(3, 4))
    with pytest.raises(ValueError, match=r"is already parallelized \(its weight is a DTensor"):
        parallelize_module(m, solo, ColwiseParallel())
    with pytest.raises(ValueError, match=r"shard of in_features \(4 split over 1 ranks: 4\)"):
        m(ag.rand(3, 5))


def test_meshes_span_the_world_in_one_dimension(solo):
    with pytest.raises(RuntimeError, match=r"mesh_shape \(2,\) has 2 ranks but the default world"):
        init_device_mesh("cpu", (2,))
    with pytest.raises(NotImplementedError, match="only 1-D meshes"):
        init_device_mesh("cpu", (1, 1))
    named = init_device_mesh("cpu", (1,), mesh_dim_names=("tp",))
    assert named["tp"] is named and named.size() == 1 and named.get_rank() == 0
    assert named.get_group() is process_group.STATE.backend and named.shape == (1,)
    with pytest.raises(KeyError, match="Invalid mesh_dim_name 'dp'"):
        named["dp"]
    with pytest.raises(NotImplementedError, match=r"supported here are output_layouts=Shard"):
        ColwiseParallel(output_layouts=Replicate())
    with pytest.raises(NotImplementedError, match=r"got input_layouts=Replicate\(\)"):
        RowwiseParallel(input_layouts=Replicate())
    with pytest.raises(NotImplementedError, match="use_local_output=False"):
        RowwiseParallel(use_local_output=False)


def test_names_and_reprs_are_torchs(solo):
    tp = pytest.importorskip("torch.distributed.tensor.parallel")
    tt = pytest.importorskip("torch.distributed.tensor")
    assert repr(ColwiseParallel()) == repr(tp.ColwiseParallel())
    assert repr(RowwiseParallel()) == repr(tp.RowwiseParallel())
    sp = RowwiseParallel(output_layouts=Shard(0))
    assert repr(sp) == repr(tp.RowwiseParallel(output_layouts=tt.Shard(0)))
    for ours, theirs in ((Shard(1), tt.Shard(1)), (Replicate(), tt.Replicate())):
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
    assert repr(solo) == "DeviceMesh((1,), 'cpu', stride=((),))"  # torch 2.13's, one rank
    import autogradcli.distributed as dist

    assert dist.init_device_mesh is init_device_mesh and dist.tensor.DTensor is DTensor
