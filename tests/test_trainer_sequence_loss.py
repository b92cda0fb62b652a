"""Per-position class targets (issue 18): (N, T, C) scores against (N, T) class indices train
with the configured CrossEntropyLoss/NLLLoss as Keras's sparse categorical cross-entropy does
(``trainer.sequence_loss``), checked against torch on the (N, C, T) layout; accuracy counts
positions; perplexity is exp of the epoch's mean per-token cross-entropy (hand-computed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag
from autogradcli import nn
from autogradcli.data import DataLoader, TensorDataset
from autogradcli.trainer.evaluate import evaluate
from autogradcli.trainer.metric_functions import count_correct
from autogradcli.trainer.metrics import EpochSums, default_metrics, is_next_token
from autogradcli.trainer.sequence_loss import class_dim, classes_last, compute_loss

N, T, C = 3, 5, 7


def scores_and_targets(n=N, t=T, c=C, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((n, t, c)).astype(np.float32),
        rng.integers(0, c, (n, t)).astype(np.int64),
    )


def log_softmax(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64)
    top = a.max(-1, keepdims=True)
    return a - top - np.log(np.exp(a - top).sum(-1, keepdims=True))


def token_nll(scores: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """-log softmax(scores)[target] at every position, by hand."""
    lp = log_softmax(scores)
    return -np.take_along_axis(lp, targets[..., None], -1)[..., 0]


# --------------------------------------------------------------------- the loss over positions
LOSSES = [
    ("CrossEntropyLoss", {}),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}),
    ("CrossEntropyLoss", {"ignore_index": 2}),
    ("CrossEntropyLoss", {"reduction": "sum"}),
    ("CrossEntropyLoss", {"reduction": "none"}),
    ("CrossEntropyLoss", {"weight": np.linspace(0.5, 2.0, C, dtype=np.float32)}),
    ("NLLLoss", {}),
    ("NLLLoss", {"ignore_index": 2, "reduction": "sum"}),
]


@pytest.mark.parametrize("name, kwargs", LOSSES)
def test_loss_over_positions_is_torchs_on_the_class_first_layout(name, kwargs):
    scores, targets = scores_and_targets()
    if name == "NLLLoss":
        scores = log_softmax(scores).astype(np.float32)
    ours_kw = {k: ag.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
    theirs_kw = {k: torch.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
    out = ag.tensor(scores, requires_grad=True)
    loss = compute_loss(getattr(nn, name)(**ours_kw), out, ag.tensor(targets))
    t_out = torch.tensor(scores, requires_grad=True)
    want = getattr(torch.nn, name)(**theirs_kw)(t_out.permute(0, 2, 1), torch.tensor(targets))
    np.testing.assert_allclose(loss.detach().numpy(), want.detach().numpy(), rtol=1e-5)
    loss.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(out.grad.numpy(), t_out.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_loss_module_keeps_torch_semantics():
    """nn.CrossEntropyLoss itself still reads classes from dim 1, refusing (N, T, C) as torch."""
    scores, targets = scores_and_targets()
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.CrossEntropyLoss()(torch.tensor(scores), torch.tensor(targets))
    with pytest.raises(RuntimeError) as ours:
        nn.CrossEntropyLoss()(ag.tensor(scores), ag.tensor(targets))
    assert str(ours.value).startswith(str(theirs.value))


def test_torch_layout_and_other_losses_are_left_alone():
    scores = np.random.default_rng(1).standard_normal((N, C, T)).astype(np.float32)
    targets = np.random.default_rng(2).integers(0, C, (N, T))
    loss = compute_loss(nn.CrossEntropyLoss(), ag.tensor(scores), ag.tensor(targets))
    want = torch.nn.functional.cross_entropy(torch.tensor(scores), torch.tensor(targets))
    assert math.isclose(loss.item(), want.item(), rel_tol=1e-5)
    # an element-wise loss compares what it is given: no class dim is moved
    a, _ = scores_and_targets()
    mse = compute_loss(nn.MSELoss(), ag.tensor(a), ag.tensor(a + 1))
    assert math.isclose(mse.item(), 1.0, rel_tol=1e-5)


@pytest.mark.parametrize(
    "out_shape, y_shape, y_dtype, last",
    [
        ((N, T, C), (N, T), np.int64, True),  # a layer list's output
        ((N, T, C), (N + 1, T), np.int64, True),  # a whole data set's labels against a batch
        ((N, 4, 5, C), (N, 4, 5), np.int64, True),  # more position dims
        ((N, T, T), (N, T), np.int64, True),  # C == T: classes last, as a layer list gives
        ((N, T, C), (N, T), np.int32, True),
        ((N, T, C), (N, T), np.float32, False),  # float targets: probabilities, torch's rule
        ((N, T, C), (N, T), np.bool_, False),
        ((N, C, T), (N, T), np.int64, False),  # torch's (N, C, T) layout
        ((N, T, C), (N, T + 1), np.int64, False),
        ((N, C), (N,), np.int64, False),  # one class per sample: torch's (N, C)
        ((T, C), (T,), np.int64, False),
    ],
)
def test_which_outputs_have_classes_last(out_shape, y_shape, y_dtype, last):
    out, y = ag.zeros(*out_shape), ag.tensor(np.zeros(y_shape, dtype=y_dtype))
    assert classes_last(out, y) is last
    assert class_dim(out, y) == (-1 if last else 1)


# --------------------------------------------------------------------- metrics per position
def test_accuracy_counts_positions_and_leaves_ignored_ones_out():
    scores, targets = scores_and_targets()
    pred = scores.argmax(-1)
    out, y = ag.tensor(scores), ag.tensor(targets)
    assert count_correct(out, y, nn.CrossEntropyLoss()) == (int((pred == targets).sum()), N * T)
    targets[0, :2] = -1
    keep = targets != -1
    want = (int(((pred == targets) & keep).sum()), int(keep.sum()))
    assert count_correct(out, ag.tensor(targets), nn.CrossEntropyLoss(ignore_index=-1)) == want


def test_perplexity_is_exp_of_the_epochs_mean_token_cross_entropy():
    """Two batches with different token counts: exp(mean over all tokens), not a batch mean."""
    batches = [scores_and_targets(n=1, t=2, seed=3), scores_and_targets(n=4, t=2, seed=4)]
    batches[0][0][:] *= 6.0  # a confidently wrong batch makes the two means differ
    sums = EpochSums("classification", nn.CrossEntropyLoss(), ["accuracy", "perplexity"])
    nll = []
    for scores, targets in batches:
        out, y = ag.tensor(scores), ag.tensor(targets)
        loss = compute_loss(sums.loss_fn, out, y)
        sums.add(loss.item(), out, out, y)
        nll.append(token_nll(scores, targets))
    want = math.exp(np.concatenate([b.ravel() for b in nll]).mean())
    per_batch = np.mean([math.exp(b.mean()) for b in nll])
    got = sums.metrics("val")["val_perplexity"]
    assert math.isclose(got, want, rel_tol=1e-9)
    assert not math.isclose(got, per_batch, rel_tol=1e-3)


def test_perplexity_is_the_same_for_nll_loss_and_leaves_ignored_targets_out():
    scores, targets = scores_and_targets()
    targets[1, 3:] = 0
    keep = targets != 0
    want = math.exp(token_nll(scores, targets)[keep].mean())
    for loss_fn, given in (
        (nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.2), scores),
        (nn.NLLLoss(ignore_index=0), log_softmax(scores).astype(np.float32)),
    ):
        sums = EpochSums("classification", loss_fn, ["perplexity"])
        sums.add(1.0, ag.tensor(given), ag.tensor(given), ag.tensor(targets))
        assert math.isclose(sums.metrics("val")["val_perplexity"], want, rel_tol=1e-6)


def test_perplexity_without_class_targets_is_not_logged():
    sums = EpochSums("regression", nn.MSELoss(), ["perplexity"])
    sums.add(1.0, ag.zeros(4, 1), ag.zeros(4, 1), ag.zeros(4, 1))
    assert "val_perplexity" not in sums.metrics("val")


def test_evaluate_gives_torchs_loss_and_per_position_metrics():
    scores, targets = scores_and_targets(n=8, seed=5)
    model = nn.Identity()
    loader = DataLoader(TensorDataset(ag.tensor(scores), ag.tensor(targets)), batch_size=4)
    got = evaluate(
        model, nn.CrossEntropyLoss(), loader, "classification", ["accuracy", "perplexity"]
    )
    want = torch.nn.functional.cross_entropy(
        torch.tensor(scores).permute(0, 2, 1), torch.tensor(targets)
    ).item()
    assert math.isclose(got["test_loss"], want, rel_tol=1e-5)
    assert math.isclose(got["test_acc"], float((scores.argmax(-1) == targets).mean()))
    assert math.isclose(got["test_perplexity"], math.exp(want), rel_tol=1e-5)


@pytest.mark.parametrize(
    "out_shape, y_shape, y_dtype, next_token",
    [
        ((N, T, C), (N, T), np.int64, True),
        ((N, C), (N,), np.int64, False),
        ((N, T, C), (N, T), np.float32, False),
        ((N, 4, 5, C), (N, 4, 5), np.int64, False),  # per pixel: not a token sequence
    ],
)
def test_next_token_task_logs_perplexity_by_default(out_shape, y_shape, y_dtype, next_token):
    out, y = ag.zeros(*out_shape), ag.tensor(np.zeros(y_shape, dtype=y_dtype))
    assert is_next_token(out, y) is next_token
    names = default_metrics("classification", is_next_token(out, y))
    assert names == (["accuracy", "perplexity"] if next_token else ["accuracy"])
    assert default_metrics("regression", True) == ["mae"]


def test_loss_and_metrics_on_the_device_stand_in(strict_cuda):
    """The per-position loss, accuracy and perplexity compute on the device's arrays (the
    strict cupy stand-in refuses numpy calls on them) and agree with the CPU."""
    scores, targets = scores_and_targets(seed=6)
    targets[0, 0] = -100  # CrossEntropyLoss's default ignore_index
    values = {}
    for device in ("cpu", "cuda"):
        out, y = ag.tensor(scores, device=device), ag.tensor(targets, device=device)
        sums = EpochSums("classification", nn.CrossEntropyLoss(), ["accuracy", "perplexity"])
        sums.add(compute_loss(sums.loss_fn, out, y).item(), out, out, y)
        values[device] = sums.metrics("val")
    assert values["cuda"] == pytest.approx(values["cpu"], rel=1e-6)
    keep = targets != -100
    want = math.exp(token_nll(scores, np.where(keep, targets, 0))[keep].mean())
    assert values["cpu"]["val_perplexity"] == pytest.approx(want, rel=1e-6)
    assert values["cpu"]["val_loss"] == pytest.approx(math.log(want), rel=1e-5)
