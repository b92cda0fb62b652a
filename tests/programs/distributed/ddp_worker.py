"""DistributedDataParallel checks, run on each rank under mpiexec; any failure raises (and so
aborts every rank). ``python ddp_worker.py MODE``; rank 0 prints one line per finding.

Equivalence: every rank also trains a single-process reference on the whole global batch of 64
(the ranks' shares interleave it: DistributedSampler with one replica gives the global order),
and the DDP replica must match it every epoch within float32 reduction-order tolerance, while a
replica trained on its own share alone must not (so the comparison can fail).
"""

import sys

import numpy as np

import autogradcli as torch
import autogradcli.distributed as dist
import autogradcli.nn as nn
import autogradcli.nn.functional as F
from autogradcli.data import DataLoader, DistributedSampler, Subset, load_digits
from autogradcli.nn.parallel import DistributedDataParallel as DDP

MODE = sys.argv[1]
TOL = 2e-5  # float32: the all-reduce sums in another order than one process does

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
GLOBAL_BATCH = 64 if 64 % world == 0 else 66  # 3 ranks: 22 samples each


def say(*a):
    if rank == 0:
        print(*a, flush=True)


def mlp():
    return nn.Sequential(
        nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)
    )


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, 10),
    )


def same(a, b):
    return np.array_equal(a.numpy(), b.numpy())


def max_diff(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return max(float(np.abs(sa[k].numpy().astype(np.float64) - sb[k].numpy()).max()) for k in sa)


def equivalence(make, flatten, epochs):
    data = load_digits(flatten=flatten)
    data = Subset(
        data, range((1797 // GLOBAL_BATCH) * GLOBAL_BATCH)
    )  # whole global batches: no padding anywhere
    torch.manual_seed(0)
    ref = make()
    torch.manual_seed(rank)  # a different start on every rank but 0: the broadcast must fix it
    local = make()
    local_only = make()
    if flatten is False:
        local = nn.SyncBatchNorm.convert_sync_batchnorm(local)
    ddp = DDP(local, bucket_cap_mb=0.01)  # small buckets: several all-reduces per backward
    local_only.load_state_dict(ref.state_dict())
    assert max_diff(ddp.module, ref) == 0.0, "rank 0's weights were not broadcast"
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    opt_lo = torch.optim.SGD(local_only.parameters(), lr=0.05, momentum=0.9)
    ref_sampler = DistributedSampler(data, num_replicas=1, rank=0, seed=7)
    sampler = DistributedSampler(data, seed=7)
    ref_loader = DataLoader(data, batch_size=GLOBAL_BATCH, sampler=ref_sampler)
    loader = DataLoader(data, batch_size=GLOBAL_BATCH // world, sampler=sampler)
    for epoch in range(epochs):
        ref_sampler.set_epoch(epoch)
        sampler.set_epoch(epoch)
        for (xg, yg), (x, y) in zip(ref_loader, loader):
            for model, opt_, xb, yb in (
                (ref, opt_ref, xg, yg),
                (ddp, opt, x, y),
                (local_only, opt_lo, x, y),
            ):
                opt_.zero_grad()
                F.cross_entropy(model(xb), yb).backward()
                opt_.step()
        d = max_diff(ddp.module, ref)
        lo = max_diff(local_only, ref)
        say(
            f"{MODE} epoch {epoch + 1}: max |ddp - single| {d:.3g}, max |own share only - single| {lo:.3g}"
        )
        assert d <= TOL, f"rank {rank} epoch {epoch + 1}: DDP differs from one process by {d}"
        assert lo > 100 * TOL, "training on the local share alone should differ (test sensitivity)"
    # the replicas agree exactly with each other
    flat = torch.cat([p.detach().reshape(-1) for p in ddp.parameters()])
    others = [torch.zeros_like(flat) for _ in range(world)]
    dist.all_gather(others, flat)
    assert all(same(o, others[0]) for o in others), "replicas diverged"
    assert list(ddp.state_dict()) == ["module." + k for k in ref.state_dict()]


def no_sync():
    data = load_digits(flatten=True)
    torch.manual_seed(0)
    ref = mlp()
    ddp = DDP(mlp())
    ref.load_state_dict(ddp.module.state_dict())
    micro = [(data[i * 64 : (i + 1) * 64]) for i in range(3)]
    share = GLOBAL_BATCH // world
    for k, (x, y) in enumerate(micro):
        F.cross_entropy(ref(x), y).backward()
        xs, ys = x[rank * share : (rank + 1) * share], y[rank * share : (rank + 1) * share]
        if k < 2:
            with ddp.no_sync():
                F.cross_entropy(ddp(xs), ys).backward()
            g = ddp.module[0].weight.grad.reshape(-1).clone()
            gs = [torch.zeros_like(g) for _ in range(world)]
            dist.all_gather(gs, g)
            assert not same(gs[0], gs[1]), "no_sync must not communicate"
        else:
            F.cross_entropy(ddp(xs), ys).backward()
    d = max(
        float((p.grad - q.grad).abs().max()) for p, q in zip(ddp.parameters(), ref.parameters())
    )
    say(f"no_sync: 2 local + 1 synced backward, max |grad - single-process accumulated| {d:.3g}")
    assert d <= TOL


def unused():
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 3)
            self.b = nn.Linear(4, 3)
            self.never = nn.Linear(4, 3)

        def forward(self, x, use_b):
            return self.a(x) + (self.b(x) if use_b else 0.0)

    torch.manual_seed(0)
    x = torch.randn(5, 4) + rank
    model = DDP(Branchy(), find_unused_parameters=True)
    model(x, use_b=(rank == 0)).sum().backward()
    ga = [torch.zeros(3, 4) for _ in range(world)]
    dist.all_gather(ga, model.module.b.weight.grad.contiguous())
    assert all(same(g, ga[0]) for g in ga), "b's gradient must be averaged on every rank"
    want_b = x.sum(0).expand(3, 4) / world if rank == 0 else None
    if rank == 0:
        assert np.allclose(model.module.b.weight.grad.numpy(), want_b.numpy(), atol=1e-5)
    assert model.module.never.weight.grad is None, "a parameter no rank used keeps grad None"
    # without find_unused_parameters, the next forward names the parameters left unreduced
    plain = DDP(Branchy())
    plain(x, use_b=False).sum().backward()
    try:
        plain(x, use_b=False)
    except RuntimeError as e:
        assert "Expected to have finished reduction in the prior iteration" in str(e)
        assert "b.weight, b.bias, never.weight, never.bias" in str(e), str(e)
    else:
        raise AssertionError("an unused parameter went unnoticed")
    say(
        "unused: find_unused_parameters averages the used ones; without it the error names b.weight, b.bias, never.weight, never.bias"
    )


def broadcast():
    torch.manual_seed(rank)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    with torch.no_grad():
        model[1].running_mean.fill_(float(rank + 1))
    ddp = DDP(model)
    torch.manual_seed(0)
    want = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    with torch.no_grad():
        want[1].running_mean.fill_(1.0)
    assert max_diff(ddp.module, want) == 0.0
    say("broadcast: every rank holds rank 0's parameters and buffers after construction")


def syncbn():
    """SyncBatchNorm on each rank's share equals BatchNorm (PyTorch's, where installed) on the
    concatenated batch: outputs, input gradients, summed weight/bias gradients, running stats."""
    try:
        import torch as oracle
    except ImportError:
        oracle = None
    g = np.random.default_rng(3)
    n = 4 * world
    x = (g.standard_normal((n, 3, 5, 5)) * 2 + 1).astype(np.float32)
    up = g.standard_normal((n, 3, 5, 5)).astype(np.float32)
    w = g.standard_normal(3).astype(np.float32)
    b = g.standard_normal(3).astype(np.float32)
    lo, hi = rank * 4, rank * 4 + 4
    bn = nn.SyncBatchNorm(3, momentum=0.3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor(w))
        bn.bias.copy_(torch.tensor(b))
    xs = torch.tensor(x[lo:hi], requires_grad=True)
    out = bn(xs)
    out.backward(torch.tensor(up[lo:hi]))
    gw, gb = bn.weight.grad.clone(), bn.bias.grad.clone()
    dist.all_reduce(gw)
    dist.all_reduce(gb)
    if oracle is not None:
        ref = oracle.nn.BatchNorm2d(3, momentum=0.3)
        with oracle.no_grad():
            ref.weight.copy_(oracle.tensor(w))
            ref.bias.copy_(oracle.tensor(b))
        xr = oracle.tensor(x, requires_grad=True)
        yr = ref(xr)
        yr.backward(oracle.tensor(up))
        want = [
            yr.detach().numpy(),
            xr.grad.numpy(),
            ref.weight.grad.numpy(),
            ref.bias.grad.numpy(),
            ref.running_mean.numpy(),
            ref.running_var.numpy(),
        ]
        source = "torch.nn.BatchNorm2d"
    else:
        ref = nn.BatchNorm2d(3, momentum=0.3)
        with torch.no_grad():
            ref.weight.copy_(torch.tensor(w))
            ref.bias.copy_(torch.tensor(b))
        xr = torch.tensor(x, requires_grad=True)
        yr = ref(xr)
        yr.backward(torch.tensor(up))
        want = [
            yr.detach().numpy(),
            xr.grad.numpy(),
            ref.weight.grad.numpy(),
            ref.bias.grad.numpy(),
            ref.running_mean.numpy(),
            ref.running_var.numpy(),
        ]
        source = "autogradcli.nn.BatchNorm2d"
    got = [
        out.detach().numpy(),
        xs.grad.numpy(),
        gw.numpy(),
        gb.numpy(),
        bn.running_mean.numpy(),
        bn.running_var.numpy(),
    ]
    names = ["output", "input grad", "weight grad", "bias grad", "running_mean", "running_var"]
    worst = 0.0
    for name, a, e in zip(names, got, want):
        if name in ("output", "input grad"):
            e = e[lo:hi]
        d = float(np.abs(a - e).max())
        worst = max(worst, d)
        assert d <= 1e-5, f"rank {rank}: SyncBatchNorm {name} differs from {source} by {d}"
    say(f"syncbn: {world} ranks vs {source} on the concatenated batch, max difference {worst:.3g}")


{
    "syncbn": syncbn,
    "mlp": lambda: equivalence(mlp, True, 3),
    "cnn": lambda: equivalence(cnn, False, 2),
    "no_sync": no_sync,
    "unused": unused,
    "broadcast": broadcast,
}[MODE]()
dist.destroy_process_group()
