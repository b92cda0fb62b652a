"""Tensor parallelism checks, run on each rank under mpiexec; any failure raises (and so aborts
every rank). Rank 0 prints one line per finding.

The pytorch/examples TP ToyModel (in_proj Colwise, out_proj Rowwise), built on each rank from its
own seed (parallelize_module starts every rank from rank 0's values), must give the outputs,
input and parameter gradients (gathered with full_tensor) and SGD steps of the unsharded model
trained in one process on the same data. A second, unevenly split model checks the chunking.
"""

import numpy as np

import autogradcli as torch
import autogradcli.distributed as dist
import autogradcli.nn as nn
from autogradcli.distributed._tensor.device_mesh import init_device_mesh
from autogradcli.distributed.tensor import DTensor, Shard
from autogradcli.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)

TOL = 1e-5  # float32, relative: the all-reduce sums in another order than one process does
mesh = init_device_mesh(device_type="cpu", mesh_shape=(2,))
rank, world = mesh.get_rank(), mesh.size()


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(10, 32)
        self.relu = nn.ReLU()
        self.out_proj = nn.Linear(32, 5)

    def forward(self, x):
        return self.out_proj(self.relu(self.in_proj(x)))


def build(seed, make):
    torch.manual_seed(seed)
    return make()


def diff(a, b):
    """The largest difference, relative to the largest magnitude of ``b`` (at least 1)."""
    a, b = a.detach().numpy(), b.detach().numpy()
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def compare(make, plan, x_shape, tag):
    tp = parallelize_module(build(10 + rank, make), mesh, plan)
    single = build(10, make)
    for name, p in tp.named_parameters():
        assert isinstance(p, DTensor) and isinstance(p, nn.Parameter), name
        assert p.grad is None, name
        assert diff(p.full_tensor(), dict(single.named_parameters())[name]) == 0.0, name
    w = tp.get_submodule(next(iter(plan))).weight
    assert w.placements == (Shard(0),) and w.shape[0] < w.full_tensor().shape[0]
    opt_tp = torch.optim.SGD(tp.parameters(), lr=0.25)
    opt_1 = torch.optim.SGD(single.parameters(), lr=0.25)
    worst = 0.0
    for i in range(3):
        torch.manual_seed(i)
        inp = torch.rand(*x_shape)
        x_tp, x_1 = inp.clone().requires_grad_(), inp.clone().requires_grad_()
        out_tp, out_1 = tp(x_tp), single(x_1)
        worst = max(worst, diff(out_tp, out_1))
        (out_tp**2).sum().backward()
        (out_1**2).sum().backward()
        worst = max(worst, diff(x_tp.grad, x_1.grad))
        assert all(p.grad.placements == p.placements for p in tp.parameters())
        ref = dict(single.named_parameters())
        for name, p in tp.named_parameters():
            worst = max(worst, diff(p.grad.full_tensor(), ref[name].grad))
        opt_tp.step()
        opt_1.step()
        opt_tp.zero_grad()
        opt_1.zero_grad()
        for name, p in tp.named_parameters():
            worst = max(worst, diff(p.full_tensor(), ref[name]))
        assert worst <= TOL, (tag, i, worst)
    if rank == 0:
        print(f"{tag}: outputs, gradients and SGD steps equal one process (max diff {worst:.2e})")
    return tp


tp = compare(ToyModel, {"in_proj": ColwiseParallel(), "out_proj": RowwiseParallel()}, (20, 10), "toy")
local = tp.in_proj.weight.to_local()
assert tuple(local.shape) == (32 // world, 10) and type(local) is torch.Tensor
sd = tp.state_dict()
assert tuple(sd["in_proj.weight"].shape) == (32 // world, 10), sd["in_proj.weight"].shape
assert tuple(sd["out_proj.bias"].shape) == (5,)
if rank == 0:
    print(f"state_dict: local shards {tuple(sd['in_proj.weight'].shape)}")


def uneven():
    return nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))


tp2 = compare(uneven, {"0": ColwiseParallel(), "2": RowwiseParallel()}, (6, 4), "uneven")
assert tuple(tp2[0].weight.shape) == ((3, 4) if rank == 0 else (2, 4)), tp2[0].weight.shape

# sequence parallel (pytorch/examples' sequence_parallel_example.py plan): each rank feeds its own
# rows; the outputs, input gradients and steps are those rows of one process on all of them
plan = {
    "in_proj": ColwiseParallel(input_layouts=Shard(0)),
    "out_proj": RowwiseParallel(output_layouts=Shard(0)),
}
sp, single = parallelize_module(build(10 + rank, ToyModel), mesh, plan), build(10, ToyModel)
opt_sp = torch.optim.SGD(sp.parameters(), lr=0.25)
opt_1 = torch.optim.SGD(single.parameters(), lr=0.25)
rows, worst = slice(6 * rank, 6 * rank + 6), 0.0
for i in range(3):
    torch.manual_seed(100 + i)
    full = torch.rand(6 * world, 10)
    x_sp, x_1 = full[rows].clone().requires_grad_(), full.clone().requires_grad_()
    out_sp, out_1 = sp(x_sp), single(x_1)
    assert tuple(out_sp.shape) == (6, 5), out_sp.shape
    worst = max(worst, diff(out_sp, out_1[rows]))
    (out_sp**2).sum().backward()
    (out_1**2).sum().backward()
    worst = max(worst, diff(x_sp.grad, x_1.grad[rows]))
    ref = dict(single.named_parameters())
    for name, p in sp.named_parameters():
        worst = max(worst, diff(p.grad.full_tensor(), ref[name].grad))
    for opt in (opt_sp, opt_1):
        opt.step()
        opt.zero_grad()
    for name, p in sp.named_parameters():
        worst = max(worst, diff(p.full_tensor(), ref[name]))
    assert worst <= TOL, ("sequence parallel", i, worst)
if rank == 0:
    print(f"sequence parallel: rows, gradients and SGD steps equal one process ({worst:.2e})")

# the example's own loop: AdamW(foreach=True) on the parallelized model
opt = torch.optim.AdamW(tp.parameters(), lr=0.25, foreach=True)
for i in range(2):
    torch.manual_seed(i)
    tp(torch.rand(20, 10)).sum().backward()
    opt.step()
if rank == 0:
    print("example loop: AdamW foreach on DTensor parameters ran")
dist.destroy_process_group()
