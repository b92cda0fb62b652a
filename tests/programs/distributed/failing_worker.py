"""Rank 1 fails while rank 0 waits in a collective (run under mpiexec -n 2).

``raise``: rank 1 raises; the excepthook installed by init_process_group aborts every rank.
``stuck``: rank 1 sleeps far past the 2 s timeout; rank 0's all_reduce times out, names itself
and aborts every rank. ``kill``: rank 1 is killed with SIGKILL (mpiexec ends the job). ``slow``: rank 1 sleeps 1 s, well inside a 30 s timeout: both finish.
"""

import sys
import time

import autogradcli as ag
import autogradcli.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=30.0 if mode == "slow" else 2.0)
t = ag.ones(4)
if dist.get_rank() == 1:
    if mode == "raise":
        raise ValueError("rank 1 failed on purpose")
    if mode == "kill":
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(1.0 if mode == "slow" else 600)
dist.all_reduce(t)
assert t.tolist() == [2.0] * 4
print(f"rank {dist.get_rank()} finished the all_reduce", flush=True)
