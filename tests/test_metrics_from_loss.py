"""Perplexity from the batch's loss (issue 19: the time outside the training step): when the
trainer's loss is a plain mean cross-entropy, ``EpochSums.add(..., value_is_loss=True)`` takes
the summed token cross-entropy from the loss value instead of a second float64 log-softmax.
Checked against the recomputing path and a hand computation on the same batches, and every
loss it must not shortcut goes the old way, bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import nn
from autogradcli.trainer.metric_functions import perplexity_from_loss
from autogradcli.trainer.metrics import EpochSums
from autogradcli.trainer.sequence_loss import compute_loss


def batches(shapes, c=7, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    for shape in shapes:
        scores = (rng.standard_normal((*shape, c)) * 3).astype(dtype)
        yield scores, rng.integers(0, c, shape).astype(np.int64)


def hand_nll(scores: np.ndarray, targets: np.ndarray, keep: np.ndarray) -> tuple[float, int]:
    """The summed -log softmax(scores)[target] over the kept positions, in float64."""
    a = scores.astype(np.float64)
    lp = a - a.max(-1, keepdims=True)
    lp -= np.log(np.exp(lp).sum(-1, keepdims=True))
    picked = -np.take_along_axis(lp, np.where(keep, targets, 0)[..., None], -1)[..., 0]
    return float(picked[keep].sum()), int(keep.sum())


def both_paths(loss_fn, data):
    """(perplexity with the loss shortcut, without it, by hand) over the same batches."""
    fast = EpochSums("classification", loss_fn, ["accuracy", "perplexity"])
    slow = EpochSums("classification", loss_fn, ["accuracy", "perplexity"])
    total, count = 0.0, 0
    ignore = getattr(loss_fn, "ignore_index", None)
    for scores, targets in data:
        out, y = ag.tensor(scores), ag.tensor(targets)
        value = float(compute_loss(loss_fn, out, y).item())
        fast.add(value, out, out, y, value_is_loss=True)
        slow.add(value, out, out, y)
        s, n = hand_nll(scores, targets, targets != ignore)
        total, count = total + s, count + n
    assert fast.sums["nll_n"] == slow.sums["nll_n"] == count
    assert fast.sums["correct"] == slow.sums["correct"]
    return fast.metrics("v")["v_perplexity"], slow.metrics("v")["v_perplexity"], total, count


@pytest.mark.parametrize(
    "ignore, shapes, dtype",
    [
        (-100, [(4, 6), (2, 6)], np.float32),  # sequences, a short last batch
        (-100, [(5,), (3,)], np.float32),  # one class per sample, (N, C)
        (2, [(4, 6), (3, 6)], np.float32),  # ignored targets: the loss's own count
        (-100, [(4, 6)], np.float64),
    ],
)
def test_perplexity_from_the_loss_is_the_recomputed_one(ignore, shapes, dtype):
    fast, slow, total, count = both_paths(
        nn.CrossEntropyLoss(ignore_index=ignore), batches(shapes, dtype=dtype)
    )
    want = math.exp(total / count)
    assert math.isclose(slow, want, rel_tol=1e-12)  # the old path: float64 log-softmax
    # the loss is float32: its mean carries float32 rounding, nothing more
    tol = 1e-6 if dtype == np.float32 else 1e-12
    assert math.isclose(fast, want, rel_tol=tol)


def test_a_batch_whose_targets_are_all_ignored_adds_nothing():
    loss_fn = nn.CrossEntropyLoss(ignore_index=3)
    scores, _ = next(batches([(2, 4)]))
    targets = np.full((2, 4), 3)
    out, y = ag.tensor(scores), ag.tensor(targets)
    value = float(compute_loss(loss_fn, out, y).item())  # 0/0: nan, as torch's
    assert math.isnan(value)
    sums: dict = {}
    assert perplexity_from_loss(sums, value, out, y, loss_fn) is False  # not finite: recompute
    s = EpochSums("classification", loss_fn, ["perplexity"])
    s.add(value, out, out, y, value_is_loss=True)
    assert s.sums == {"nll_sum": 0.0, "nll_n": 0}


class MyCrossEntropy(nn.CrossEntropyLoss):
    pass


@pytest.mark.parametrize(
    "loss_fn",
    [
        nn.CrossEntropyLoss(label_smoothing=0.1),
        nn.CrossEntropyLoss(weight=ag.tensor(np.linspace(0.5, 2.0, 7, dtype=np.float32))),
        nn.CrossEntropyLoss(reduction="sum"),
        MyCrossEntropy(),  # a subclass may compute something else
    ],
)
def test_other_losses_recompute_bit_for_bit(loss_fn):
    sums: dict = {}
    scores, targets = next(batches([(3, 4)]))
    out, y = ag.tensor(scores), ag.tensor(targets)
    assert perplexity_from_loss(sums, 1.0, out, y, loss_fn) is False and sums == {}
    fast, slow, total, count = both_paths(loss_fn, batches([(3, 4), (2, 4)]))
    assert fast == slow and math.isclose(slow, math.exp(total / count), rel_tol=1e-12)


def test_nll_loss_and_a_value_that_is_not_the_loss_recompute():
    """NLLLoss's inputs need not be normalized, and without ``value_is_loss`` the value given
    (a test's 1.0) is never read as the loss."""
    scores, targets = next(batches([(3, 4)]))
    out, y = ag.tensor(scores), ag.tensor(targets)
    assert perplexity_from_loss({}, 1.0, out, y, nn.NLLLoss()) is False
    s = EpochSums("classification", nn.CrossEntropyLoss(), ["perplexity"])
    s.add(1.0, out, out, y)
    total, count = hand_nll(scores, targets, np.ones(targets.shape, bool))
    assert math.isclose(s.metrics("v")["v_perplexity"], math.exp(total / count), rel_tol=1e-12)


def test_on_the_device_stand_in(strict_cuda):
    """The shortcut counts the targets on the device's arrays (the strict stand-in refuses
    numpy calls on them)."""
    scores, targets = next(batches([(3, 4)]))
    targets[0, 0] = -100
    loss_fn = nn.CrossEntropyLoss()
    out, y = ag.tensor(scores, device="cuda"), ag.tensor(targets, device="cuda")
    sums: dict = {}
    value = float(compute_loss(loss_fn, out, y).item())
    assert perplexity_from_loss(sums, value, out, y, loss_fn) is True
    total, count = hand_nll(scores, targets, targets != -100)
    assert sums["nll_n"] == count and math.isclose(sums["nll_sum"], total, rel_tol=1e-6)


def test_device_counts_are_read_back_once_per_epoch(strict_cuda):
    """On a device the batch counts stay device arrays (no step waits for the device) until
    the epoch's ``metrics``/``state_dict`` read them back as plain numbers, the CPU's."""
    data = list(batches([(3, 4), (2, 4)]))
    values, states = {}, {}
    for device in ("cpu", "cuda"):
        for shortcut in (True, False):
            sums = EpochSums("classification", nn.CrossEntropyLoss(), ["accuracy", "perplexity"])
            for scores, targets in data:
                out, y = ag.tensor(scores, device=device), ag.tensor(targets, device=device)
                value = float(compute_loss(sums.loss_fn, out, y).item())
                sums.add(value, out, out, y, value_is_loss=shortcut)
            kinds = {k: type(v).__name__ for k, v in sums.sums.items()}
            if device == "cuda":
                on_device = {k for k, v in kinds.items() if v == "StrictArray"}
                assert on_device == {"correct", "n_acc", "nll_sum", "nll_n"}
            states[device, shortcut] = sums.state_dict()["sums"]
            values[device, shortcut] = sums.metrics("v")
            assert all(isinstance(v, (int, float)) for v in sums.sums.values())
    for shortcut in (True, False):
        assert states["cuda", shortcut] == pytest.approx(states["cpu", shortcut], rel=1e-6)
        assert values["cuda", shortcut] == pytest.approx(values["cpu", shortcut], rel=1e-6)
        assert isinstance(states["cuda", shortcut]["correct"], int)
