"""The small ops that programs run one at a time (the per-character RNN tutorials, the CRF
tutorial, a polynomial fit), beside torch and optionally an older tree, forward (+ backward),
one thread, in one rotation.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/bench_small_ops.py [--rounds 2000]
    ... --before /tmp/old   # an older tree's package too (git archive), paired

These are the ops whose per-call cost the corpus (bench_programs.py) showed far above torch's;
bench/README.md's "Small ops" figures come from here. The last row is the char-RNN generation
tutorial's training step on one name of 8 letters (its RNN: cat, three Linears, dropout,
log_softmax, NLLLoss per letter), forward and backward.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_select import side_by_side, table_args


def char_rnn_step(lib: Any) -> Callable[[], Any]:
    """The char-RNN generation tutorial's train(): 8 letters through its RNN, then backward."""
    nn = lib.nn
    lib.manual_seed(0)
    i2h, i2o, o2o = nn.Linear(190, 128), nn.Linear(190, 59), nn.Linear(187, 59)
    drop, log_softmax, nll = nn.Dropout(0.1), nn.LogSoftmax(dim=1), nn.NLLLoss()
    category = lib.zeros(1, 3)
    letters = lib.tensor(np.eye(59, dtype=np.float32)[:8].reshape(8, 1, 59))
    targets = lib.tensor(np.array([[1], [2], [3], [4], [5], [6], [7], [58]]))

    def step() -> None:
        hidden = lib.zeros(1, 128)
        loss = lib.zeros(1)
        for i in range(8):
            both = lib.cat((category, letters[i], hidden), 1)
            hidden, out = i2h(both), i2o(both)
            out = log_softmax(drop(o2o(lib.cat((hidden, out), 1))))
            loss += nll(out, targets[i])
        loss.backward()

    return step


def cases(lib: Any) -> dict[str, Callable[[], Any]]:
    """Each case's call on ``lib`` (torch or an autogradcli), from the same numpy data."""
    rng = np.random.default_rng(0)
    row = lib.tensor(rng.standard_normal((1, 59)).astype(np.float32), requires_grad=True) * 1
    a, b = lib.zeros(1, 3), lib.zeros(1, 59)
    h = lib.tensor(rng.standard_normal((1, 128)).astype(np.float32), requires_grad=True)
    g190 = lib.tensor(rng.standard_normal((1, 190)).astype(np.float32))
    letters = lib.zeros(8, 1, 59)
    five = lib.tensor(rng.standard_normal((1, 5)).astype(np.float32), requires_grad=True) * 1
    one = five[0, 2].view(1, -1)
    x = lib.tensor(np.linspace(-math.pi, math.pi, 2000, dtype=np.float32))
    target = lib.tensor(np.array([3]))
    F = lib.nn.functional
    return {
        "log_softmax, 1x59": lambda: F.log_softmax(row, 1),
        "nll_loss, 1x59": lambda: F.nll_loss(row, target),
        "cat of 1x3, 1x59, 1x128": lambda: lib.cat((a, b, h), 1),
        "cat of three, fwd+bwd": lambda: lib.cat((a, b, h), 1).backward(g190),
        "x[i], 8x1x59": lambda: letters[3],
        "max(x, 1), 1x5": lambda: lib.max(five, 1),
        "expand 1x1 to 1x5": lambda: one.expand(1, 5),
        "x ** 4, 2,000 values in [-pi, pi]": lambda: x**4,
        "char-RNN step: 8 letters fwd+bwd": char_rnn_step(lib),
    }


def main() -> None:
    args = table_args(__doc__, 2000)
    side_by_side(cases, args.rounds, args.before)


if __name__ == "__main__":
    main()
