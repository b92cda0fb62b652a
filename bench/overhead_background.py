"""``bench_overhead.py --background CONFIGS``: checkpoints written at once, by
``Checkpoint``'s default rule and always by the background writer thread
(``background=False/None/True``), alternating in one process, medians of ``--repeats`` runs
each; then the same on a synthetic MLP whose checkpoint is 0.2, 1.9 and 16.5 MiB (5 epochs of
20 steps). What the default rule was chosen from."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable

now = time.perf_counter
MODES = (False, None, True)
HEAD = "at once / default / background"


def _forcing(background: bool | None):
    """Make every ``Checkpoint`` (the configs' default one included) write ``background``."""
    from autogradcli.trainer import Checkpoint

    init = Checkpoint.__init__

    def forced(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.background = background

    return forced, init


def configs_ab(names: list[str], run_once: Callable[[str], dict], repeats: int) -> str:
    """Per config: run and step seconds for each of ``MODES``."""
    from autogradcli.trainer import Checkpoint

    got: dict[tuple[str, bool | None], list[tuple[float, float]]] = {}
    for _ in range(repeats):
        for background in MODES:
            forced, init = _forcing(background)
            Checkpoint.__init__ = forced
            try:
                for name in names:
                    r = run_once(name)
                    got.setdefault((name, background), []).append((r["run"], r.get("step", 0.0)))
            finally:
                Checkpoint.__init__ = init
    lines = [f"| config | run s {HEAD} | step s {HEAD} |", "|---|---|---|"]
    for name in names:
        med = {b: [statistics.median(v[i] for v in got[(name, b)]) for i in (0, 1)] for b in MODES}
        runs, steps = (" / ".join(f"{med[b][i]:.4f}" for b in MODES) for i in (0, 1))
        lines.append(f"| {name} | {runs} | {steps} |")
    return "\n".join(lines) + "\n"


def sizes_ab(repeats: int, widths: tuple[int, ...] = (128, 400, 1200)) -> str:
    """A Linear(n, n)-ReLU-Linear(n, 2) MLP with Adam, 5 epochs of 20 steps of 32 rows: the
    whole fit's seconds for each of ``MODES``, per checkpoint size."""
    import numpy as np

    import autogradcli as ag
    from autogradcli import data as D
    from autogradcli import nn, optim
    from autogradcli.trainer import Checkpoint, RunDir, Trainer

    tmp = tempfile.mkdtemp()

    def fit(n: int, background: bool | None) -> tuple[float, int]:
        ag.manual_seed(0)
        x = ag.tensor(np.random.RandomState(0).randn(32 * 20, n).astype(np.float32))
        y = ag.tensor(np.arange(32 * 20) % 2)
        model = nn.Sequential(nn.Linear(n, n), nn.ReLU(), nn.Linear(n, 2))
        trainer = Trainer(
            model, nn.CrossEntropyLoss(), optim.Adam(model.parameters(), lr=1e-3),
            D.DataLoader(D.TensorDataset(x, y), batch_size=32), epochs=5,
            callbacks=[Checkpoint(background=background)], run=RunDir.create(tmp, "ab"),
        )  # fmt: skip
        t0 = now()
        trainer.fit()
        return now() - t0, os.path.getsize(trainer.run.checkpoint_path("last"))

    lines = [f"| checkpoint MiB | fit s {HEAD} |", "|---|---|"]
    for n in widths:
        times: dict[bool | None, list[float]] = {b: [] for b in MODES}
        for _ in range(repeats):
            for background in MODES:
                seconds, size = fit(n, background)
                times[background].append(seconds)
        cells = " / ".join(f"{statistics.median(times[b]):.4f}" for b in MODES)
        lines.append(f"| {size / 2**20:.2f} | {cells} |")
    return "\n".join(lines) + "\n"
