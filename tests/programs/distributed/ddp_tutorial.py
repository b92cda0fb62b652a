"""A DistributedDataParallel program in the style of PyTorch's DDP tutorial (the torchrun form,
"elastic_ddp.py", plus its checkpoint demo), ported by the import lines alone.

Run with ``mpiexec -n 2 python ddp_tutorial.py``: the launcher gives every process its rank.
(The tutorial's "gloo" backend is autogradcli's MPI backend for CPU tensors.)
"""

import os
import tempfile

import autogradcli as torch
import autogradcli.distributed as dist
import autogradcli.nn as nn
import autogradcli.optim as optim
from autogradcli.nn.parallel import DistributedDataParallel as DDP


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    print(f"Start running basic DDP example on rank {rank}.")
    torch.manual_seed(rank)  # replicas start different; DDP copies rank 0's weights

    model = ToyModel()
    ddp_model = DDP(model)

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    steps = 5
    for _ in range(steps):
        optimizer.zero_grad()
        outputs = ddp_model(torch.randn(20, 10))
        labels = torch.randn(20, 5)
        loss = loss_fn(outputs, labels)
        loss.backward()
        optimizer.step()
    print(f"rank {rank}: finished {steps} steps, loss {loss.item():.4f}")
    return ddp_model


def demo_checkpoint(ddp_model):
    rank = dist.get_rank()
    path = os.path.join(tempfile.gettempdir(), f"agrad_ddp_{os.getppid()}.checkpoint")
    if rank == 0:
        # all processes have the same parameters: save them once, on rank 0
        torch.save(ddp_model.state_dict(), path)
    dist.barrier()  # the others load only once rank 0 has saved

    map_location = "cpu"
    ddp_model.load_state_dict(torch.load(path, map_location=map_location, weights_only=True))
    weights = torch.cat([p.detach().reshape(-1) for p in ddp_model.parameters()])
    gathered = [torch.zeros_like(weights) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, weights)
    same = all(bool((g == gathered[0]).all()) for g in gathered)
    print(f"rank {rank}: checkpoint loaded, replicas identical: {same}")
    dist.barrier()
    if rank == 0:
        os.remove(path)


if __name__ == "__main__":
    model = demo_basic()
    demo_checkpoint(model)
    dist.destroy_process_group()
