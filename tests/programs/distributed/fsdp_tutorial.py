"""An FSDP training program in the style of PyTorch's "Getting Started with FSDP" tutorial,
written against ``autogradcli`` by import renaming only: the same text with ``torch`` imports
runs under torchrun (tests/test_fsdp_program.py). Run: ``mpiexec -n 2 python fsdp_tutorial.py``.
"""

import functools

import autogradcli as torch
import autogradcli.distributed as dist
import autogradcli.nn as nn
import autogradcli.nn.functional as F
import autogradcli.optim as optim
from autogradcli.distributed.fsdp import FullStateDictConfig, StateDictType
from autogradcli.distributed.fsdp import FullyShardedDataParallel as FSDP
from autogradcli.distributed.fsdp.fully_sharded_data_parallel import BackwardPrefetch, CPUOffload
from autogradcli.distributed.fsdp.wrap import size_based_auto_wrap_policy
from autogradcli.utils.data import DataLoader, TensorDataset
from autogradcli.utils.data.distributed import DistributedSampler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 2)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.fc2(self.dropout(F.relu(self.fc1(x))))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    x = torch.randn(64, 10)
    y = (x.sum(1) > 0).long()
    dataset = TensorDataset(x, y)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    policy = functools.partial(size_based_auto_wrap_policy, min_num_params=100)
    model = FSDP(
        Net(),
        auto_wrap_policy=policy,
        cpu_offload=CPUOffload(offload_params=False),
        backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
        device_id=torch.device("cpu"),
    )
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    for epoch in range(2):
        model.train()
        sampler.set_epoch(epoch)
        ddp_loss = torch.zeros(2)
        for data, target in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(data), target, reduction="sum")
            loss.backward()
            model.clip_grad_norm_(5.0)
            optimizer.step()
            ddp_loss[0] += loss.item()
            ddp_loss[1] += len(data)
        dist.all_reduce(ddp_loss, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch}: mean loss {(ddp_loss[0] / ddp_loss[1]).item():.4f}")
    # offload_to_cpu=True as on GPUs breaks torch's own FSDP when the model is on the CPU
    cfg = FullStateDictConfig(offload_to_cpu=False, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        states = model.state_dict()
    print(f"rank {rank}: state_dict keys {sorted(states)}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
