"""FullyShardedDataParallel and fully_shard checks, run on each rank under mpiexec; any failure
raises (and so aborts every rank). Rank 0 prints one line per finding.

Each rank builds the model from its own seed (so the broadcast at construction matters), then
FSDP (with a transformer auto-wrap policy), fully_shard (blocks, then the model) and DDP train
on each rank's share of the global batch; all three must hold the same parameters every step,
and match one process training the same start on the whole global batch.
"""

import contextlib
import functools

import numpy as np

import autogradcli as torch
import autogradcli.distributed as dist
import autogradcli.nn as nn
from autogradcli.distributed.fsdp import FullStateDictConfig, ShardingStrategy, StateDictType
from autogradcli.distributed.fsdp import FullyShardedDataParallel as FSDP
from autogradcli.distributed.fsdp import fully_shard
from autogradcli.distributed.fsdp.wrap import transformer_auto_wrap_policy
from autogradcli.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
TOL = 2e-5  # float32: the all-reduce sums in another order than one process does


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        return torch.tanh(self.fc(x)) + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 6)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        return self.out(x)


def build(seed):
    torch.manual_seed(seed)
    return Net()


def flat(model):
    sd = model.state_dict()
    return np.concatenate([sd[k].numpy().ravel() for k in sorted(sd)])


gen = np.random.default_rng(0)
X = gen.standard_normal((4 * world, 4)).astype(np.float32)
Y = gen.standard_normal((4 * world, 3)).astype(np.float32)
mine = slice(4 * rank, 4 * rank + 4)

policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
fsdp = FSDP(build(10 + rank), auto_wrap_policy=policy, sharding_strategy=ShardingStrategy.NO_SHARD)
fs = build(10 + rank)
for blk in fs.blocks:
    fully_shard(blk)
fully_shard(fs)
ddp = DDP(build(10 + rank))
single = build(10)  # rank 0's start, trained on the whole global batch in one process
own = build(10)  # rank 0's start, trained on this rank's share only (must differ: the check bites)
assert np.array_equal(flat(fsdp), flat(single)) and np.array_equal(flat(fs), flat(single))

models = {"fsdp": fsdp, "fully_shard": fs, "ddp": ddp, "single": single, "own": own}
opts = {k: torch.optim.Adam(m.parameters(), lr=0.05) for k, m in models.items()}
for step in range(3):
    for k, m in models.items():
        x, y = (X, Y) if k == "single" else (X[mine], Y[mine])
        if k == "own" and world == 1:
            continue
        opts[k].zero_grad()
        loss = ((m(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        loss.backward()
        if k == "fsdp":
            fsdp.clip_grad_norm_(100.0)
        opts[k].step()
    ref = flat(ddp)
    d_fsdp = float(np.abs(flat(fsdp) - ref).max())
    d_fs = float(np.abs(flat(fs) - ref).max())
    d_single = float(np.abs(flat(fsdp) - flat(single)).max())
    assert d_fsdp == 0.0 and d_fs == 0.0, (d_fsdp, d_fs)
    d_own = float(np.abs(flat(own) - flat(single)).max())
    assert d_single <= TOL and (world == 1 or d_own > 1e-3), (d_single, d_own)
    if rank == 0:
        print(
            f"step {step}: fsdp == ddp == fully_shard, max |fsdp - single| {d_single:.2e}, "
            f"max |own share only - single| {d_own:.2e}"
        )


# no_sync / set_requires_gradient_sync(False): the first backward stays local (equal to a
# plain replica's gradient on this rank's share), the next one averages, as DDP's
def grads_of(m):
    return np.concatenate([p.grad.numpy().ravel() for p in m.parameters()])


def backward(m, scale):
    m(torch.tensor(scale * X[mine])).pow(2).mean().backward()


plain = build(0)
plain.load_state_dict(fsdp.state_dict())
backward(plain, 1)
local = grads_of(plain)
backward(plain, 2)
local_sum = grads_of(plain)
grads = {}
for k, m in (("fsdp", fsdp), ("fully_shard", fs), ("ddp", ddp)):
    m.zero_grad()
    if k == "fully_shard":
        m.set_requires_gradient_sync(False)
        backward(m, 1)
        m.set_requires_gradient_sync(True)
    else:
        with m.no_sync():
            backward(m, 1)
    assert np.array_equal(grads_of(m), local), k
    backward(m, 2)
    grads[k] = grads_of(m)
    assert world == 1 or np.abs(grads[k] - local_sum).max() > 1e-4, k  # it did average
assert np.array_equal(grads["fsdp"], grads["ddp"])
assert np.array_equal(grads["fully_shard"], grads["ddp"])
if rank == 0:
    print("no_sync: fsdp and fully_shard accumulate as ddp does")

cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT, cfg):
    sd = fsdp.state_dict()
if rank == 0:
    assert list(sd) == list(single.state_dict()), list(sd)
    print(f"rank0_only state_dict: rank 0 has {len(sd)} keys")
else:
    assert sd == {}, sd
    print(f"rank0_only state_dict: rank {rank} has {{}}")
dist.destroy_process_group()
