"""Losses against torch.nn.functional / torch.nn: forward, gradients and second-order gradients
for every option, the Modules' reprs and defaults, and the shape/argument errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lazy_torch import torch
from oracle import check

import autogradcli as ag
import autogradcli.nn.functional as F

REDUCTIONS = ["mean", "sum", "none"]
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _fresh_rng() -> None:
    """Each test draws the same data whatever ran before it on its worker (pytest-xdist)."""
    global RNG
    RNG = np.random.default_rng(7)


def _f(m: Any) -> Any:
    return m.nn.functional


def _classes(shape: tuple[int, ...], n: int, ignore: int | None = None) -> np.ndarray:
    t = RNG.integers(0, n, size=shape).astype(np.int64)
    if ignore is not None:
        t.ravel()[::3] = ignore
    return t


# --------------------------------------------------------------------------- regression
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_mse_l1(name: str, reduction: str) -> None:
    check(lambda m, x, y: getattr(_f(m), name)(x, y, reduction=reduction), (4, 3), (4, 3))
    check(
        lambda m, x, y, w: getattr(_f(m), name)(x, y, reduction=reduction, weight=w),
        (4, 3),
        (4, 3),
        RNG.uniform(0.1, 2.0, (4, 3)),
        grad_inputs=[0, 1],
    )
    if reduction == "mean":
        check(
            lambda m, x, y: getattr(_f(m), name)(x, y, reduction=reduction),
            (5, 2),
            (5, 2),
            dtype="float32",
        )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 3.0])
def test_smooth_l1(beta: float, reduction: str) -> None:
    check(
        lambda m, x, y: _f(m).smooth_l1_loss(x, y, reduction=reduction, beta=beta), (6, 3), (6, 3)
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("delta", [0.3, 1.0, 2.5])
def test_huber(delta: float, reduction: str) -> None:
    check(lambda m, x, y: _f(m).huber_loss(x, y, reduction=reduction, delta=delta), (6, 3), (6, 3))
    check(
        lambda m, x, y, w: _f(m).huber_loss(x, y, reduction=reduction, delta=delta, weight=w),
        (6, 3),
        (6, 3),
        RNG.uniform(0.1, 2.0, (6, 3)),
        grad_inputs=[0, 1],
    )


def test_legacy_size_average_and_reduce() -> None:
    for sa, rd in [(False, None), (None, False), (True, True), (False, True)]:
        check(
            lambda m, x, y, sa=sa, rd=rd: _f(m).mse_loss(x, y, size_average=sa, reduce=rd),
            (3, 2),
            (3, 2),
        )
        mod = ag.nn.MSELoss(size_average=sa, reduce=rd)
        assert mod.reduction == torch.nn.MSELoss(size_average=sa, reduce=rd).reduction


# --------------------------------------------------------------------------- cross entropy / nll
CE_CASES = [
    dict(),
    dict(weight=True),
    dict(ignore_index=-100, ignore=True),
    dict(ignore_index=2),
    dict(label_smoothing=0.2),
    dict(weight=True, ignore=True, label_smoothing=0.1),
]


def _ce_args(case: dict[str, Any], n: int) -> tuple[list[Any], dict[str, Any]]:
    kw = {k: v for k, v in case.items() if k in ("ignore_index", "label_smoothing")}
    extra = [RNG.uniform(0.2, 2.0, n)] if case.get("weight") else []
    return extra, kw


CE_GRID = [
    (shape, case, reduction)
    for shape in [(5, 4), (4,), (3, 4, 2, 3)]
    for case in CE_CASES
    for reduction in (REDUCTIONS if shape == (5, 4) else ["mean", "none"])
]


@pytest.mark.parametrize("shape,case,reduction", CE_GRID, ids=str)
def test_cross_entropy_class_indices(shape: tuple[int, ...], case: Any, reduction: str) -> None:
    n = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0], *shape[2:])
    ignore = (
        case.get("ignore_index", -100) if (case.get("ignore") or "ignore_index" in case) else None
    )
    target = _classes(tshape, n, ignore if len(shape) > 1 else None)
    extra, kw = _ce_args(case, n)

    def fn(m: Any, x: Any, t: Any, *w: Any) -> Any:
        return _f(m).cross_entropy(x, t, *w, reduction=reduction, **kw)

    check(fn, shape, target, *extra, grad_inputs=[0])
    if reduction == "mean":
        check(fn, shape, target, *extra, grad_inputs=[0], dtype="float32")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "kw", [dict(), dict(label_smoothing=0.3), dict(weight=True), dict(weight=True, ls=0.1)], ids=str
)
def test_cross_entropy_probabilities(kw: dict[str, Any], reduction: str) -> None:
    probs = RNG.dirichlet(np.ones(4), size=5)
    extra = [RNG.uniform(0.2, 2.0, 4)] if kw.get("weight") else []
    ls = kw.get("label_smoothing", kw.get("ls", 0.0))

    def fn(m: Any, x: Any, p: Any, *w: Any) -> Any:
        return _f(m).cross_entropy(x, p, *w, reduction=reduction, label_smoothing=ls)

    check(fn, (5, 4), probs, *extra, grad_inputs=[0, 1])
    check(
        lambda m, x, p: _f(m).cross_entropy(x, p, reduction=reduction),
        (2, 3, 4),
        RNG.dirichlet(np.ones(3), size=(2, 4)).transpose(0, 2, 1),
        grad_inputs=[0, 1],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CE_CASES[:4], ids=str)
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2)], ids=str)
def test_nll_loss(shape: tuple[int, ...], case: Any, reduction: str) -> None:
    n = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0], *shape[2:])
    ignore = (
        case.get("ignore_index", -100) if (case.get("ignore") or "ignore_index" in case) else None
    )
    target = _classes(tshape, n, ignore if len(shape) > 1 else None)
    extra, kw = _ce_args(case, n)
    kw.pop("label_smoothing", None)

    def fn(m: Any, x: Any, t: Any, *w: Any) -> Any:
        return _f(m).nll_loss(x, t, *w, reduction=reduction, **kw)

    check(fn, shape, target, *extra, grad_inputs=[0])


def test_cross_entropy_all_ignored_is_nan_like_torch() -> None:
    x = ag.randn(3, 4, requires_grad=True)
    t = ag.tensor([-100, -100, -100])
    loss = F.cross_entropy(x, t)
    assert np.isnan(loss.item())
    assert np.isnan(torch.nn.functional.cross_entropy(torch.randn(3, 4), torch.tensor(t.tolist())))


def test_cross_entropy_matches_log_softmax_composition() -> None:
    """Extreme logits stay finite, as with torch's fused kernel."""
    x = np.array([[1000.0, -1000.0, 0.0], [-50.0, 50.0, 49.0]])
    check(lambda m, a, t: _f(m).cross_entropy(a, t), x, np.array([1, 2]), grad_inputs=[0])


# --------------------------------------------------------------------------- binary
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(weighted: bool, reduction: str) -> None:
    x = RNG.uniform(0.05, 0.95, (4, 3))
    t = RNG.uniform(0.0, 1.0, (4, 3))
    extra = [RNG.uniform(0.2, 2.0, (4, 3))] if weighted else []

    def fn(m: Any, a: Any, b: Any, *w: Any) -> Any:
        return _f(m).binary_cross_entropy(a, b, *w, reduction=reduction)

    check(fn, x, t, *extra, grad_inputs=[0, 1], atol=1e-7, rtol=1e-6)
    if reduction == "mean":
        check(fn, x, t, *extra, grad_inputs=[0, 1], dtype="float32", atol=1e-4, rtol=1e-3)


def test_binary_cross_entropy_clamps_log() -> None:
    x = np.array([0.0, 1.0, 0.5, 1.0])
    t = np.array([1.0, 0.0, 0.5, 1.0])
    check(lambda m, a, b: _f(m).binary_cross_entropy(a, b, reduction="none"), x, t, grad=False)
    check(lambda m, a, b: _f(m).binary_cross_entropy(a, b), x, t, grad=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("opts", ["plain", "weight", "pos_weight", "both"])
def test_bce_with_logits(opts: str, reduction: str) -> None:
    x = RNG.standard_normal((4, 3)) * 3
    t = RNG.uniform(0.0, 1.0, (4, 3))
    w = RNG.uniform(0.2, 2.0, (4, 3)) if opts in ("weight", "both") else None
    pw = RNG.uniform(0.5, 3.0, (3,)) if opts in ("pos_weight", "both") else None

    def fn(m: Any, a: Any, b: Any, *rest: Any) -> Any:
        rest_it = iter(rest)
        ww = next(rest_it) if w is not None else None
        pp = next(rest_it) if pw is not None else None
        return _f(m).binary_cross_entropy_with_logits(a, b, ww, reduction=reduction, pos_weight=pp)

    extra = [a for a in (w, pw) if a is not None]
    check(fn, x, t, *extra, grad_inputs=[0, 1])
    if reduction == "mean":
        check(fn, x, t, *extra, grad_inputs=[0, 1], dtype="float32")


def test_bce_with_logits_is_stable() -> None:
    x = np.array([-200.0, -30.0, 0.0, 30.0, 200.0])
    t = np.array([1.0, 0.0, 0.5, 1.0, 0.0])
    check(
        lambda m, a, b: _f(m).binary_cross_entropy_with_logits(a, b, reduction="none"),
        x,
        t,
        grad_inputs=[0],
    )


# --------------------------------------------------------------------------- modules
MODULES = [
    ("MSELoss", {}, "regression"),
    ("L1Loss", {"reduction": "sum"}, "regression"),
    ("SmoothL1Loss", {"beta": 0.5}, "regression"),
    ("HuberLoss", {"delta": 0.7, "reduction": "none"}, "regression"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "ignore_index": 1}, "classes"),
    ("CrossEntropyLoss", {"weight": [0.5, 1.0, 2.0, 1.5]}, "classes"),
    ("NLLLoss", {"weight": [0.5, 1.0, 2.0, 1.5], "reduction": "sum"}, "classes"),
    ("BCELoss", {"weight": [[0.5, 1.0, 2.0, 1.5]]}, "probs"),
    ("BCEWithLogitsLoss", {"pos_weight": [0.5, 1.0, 2.0, 1.5]}, "regression"),
]


@pytest.mark.parametrize("name,kw,kind", MODULES, ids=[m[0] for m in MODULES])
def test_modules(name: str, kw: dict[str, Any], kind: str) -> None:
    def build(m: Any) -> Any:
        args = {
            k: (m.tensor(v, dtype=m.float64) if isinstance(v, list) else v) for k, v in kw.items()
        }
        return getattr(m.nn, name)(**args)

    ours, theirs = build(ag), build(torch)
    assert repr(ours) == repr(theirs)
    assert ours.reduction == theirs.reduction
    assert set(dict(ours.named_buffers())) == set(dict(theirs.named_buffers()))
    if kind == "classes":
        target: Any = _classes((5,), 4)
        check(lambda m, x, t: build(m)(x, t), (5, 4), target, grad_inputs=[0])
    elif kind == "probs":
        check(
            lambda m, x, t: build(m)(x, t),
            RNG.uniform(0.1, 0.9, (5, 4)),
            RNG.uniform(0, 1, (5, 4)),
        )
    else:
        check(lambda m, x, t: build(m)(x, t), (5, 4), (5, 4))


def test_module_defaults_match_torch() -> None:
    pairs = [
        ("CrossEntropyLoss", ("ignore_index", "label_smoothing", "reduction", "weight")),
        ("NLLLoss", ("ignore_index", "reduction", "weight")),
        ("SmoothL1Loss", ("beta", "reduction")),
        ("HuberLoss", ("delta", "reduction")),
        ("BCEWithLogitsLoss", ("weight", "pos_weight", "reduction")),
    ]
    for name, attrs in pairs:
        ours, theirs = getattr(ag.nn, name)(), getattr(torch.nn, name)()
        for a in attrs:
            assert getattr(ours, a) == getattr(theirs, a), (name, a)


# --------------------------------------------------------------------------- errors
def _both(fn: Any) -> tuple[BaseException, BaseException]:
    with pytest.raises(Exception) as ours:
        fn(ag)
    with pytest.raises(Exception) as theirs:
        fn(torch)
    return ours.value, theirs.value


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _f(m).cross_entropy(m.zeros(3, 4), m.tensor([0, 1, 5])),
        lambda m: _f(m).cross_entropy(m.zeros(3, 4), m.tensor([0, 1])),
        lambda m: _f(m).cross_entropy(m.zeros(2, 4, 5), m.zeros(2, 4, dtype=m.int64)),
        lambda m: _f(m).cross_entropy(m.zeros(3, 4), m.tensor([0, 1, 2]), label_smoothing=1.5),
        lambda m: _f(m).cross_entropy(m.zeros(3, 4), m.tensor([0, 1, 2]), weight=m.ones(3)),
        lambda m: _f(m).nll_loss(m.zeros(3, 4), m.tensor([0, 1, 2]), reduction="avg"),
        lambda m: _f(m).nll_loss(m.zeros(()), m.tensor(1)),
        lambda m: _f(m).binary_cross_entropy(m.ones(3) * 2, m.ones(3)),
        lambda m: _f(m).binary_cross_entropy_with_logits(m.zeros(3), m.zeros(3, 1)),
        lambda m: _f(m).smooth_l1_loss(m.zeros(3), m.zeros(3), beta=-1.0),
        lambda m: _f(m).huber_loss(m.zeros(3), m.zeros(3), delta=0.0),
        lambda m: _f(m).mse_loss(m.zeros(3), m.zeros(3), reduction="bad"),
    ],
)
def test_errors_match_torch(fn: Any) -> None:
    ours, theirs = _both(fn)
    assert type(ours) is type(theirs)
    assert str(ours).startswith(str(theirs).replace("torch.Size", "autogradcli.Size"))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_shape_mismatch_names_both_shapes(name: str) -> None:
    with pytest.raises(ValueError, match=r"target size \(4,\).*input size \(3, 4\)"):
        getattr(F, name)(ag.zeros(3, 4), ag.zeros(4))


def test_bce_shape_mismatch_names_both_shapes() -> None:
    with pytest.raises(ValueError, match=r"\(3, 1\).*\(3,\)"):
        F.binary_cross_entropy(ag.full((3,), 0.5), ag.full((3, 1), 0.5))


def test_float32_stays_float32_and_grad_fn_names() -> None:
    x = ag.randn(4, 3, requires_grad=True)
    t = ag.tensor([0, 2, 1, 1])
    assert F.cross_entropy(x, t).dtype == ag.float32
    assert F.cross_entropy(x, t).grad_fn.name() == "NllLossBackward0"
    assert F.nll_loss(x, t).grad_fn.name() == "NllLossBackward0"
    assert F.binary_cross_entropy_with_logits(x, x.detach()).dtype == ag.float32
    assert F.mse_loss(x, x.detach() * 2).dtype == ag.float32


@pytest.mark.parametrize(
    "name,kw",
    [
        ("cross_entropy", {}),
        ("cross_entropy", {"label_smoothing": 0.1}),
        ("cross_entropy", {"weight": True}),
        ("nll_loss", {}),
    ],
    ids=str,
)
@pytest.mark.parametrize("target", [[2, 2], 2], ids=["batched", "unbatched"])
def test_mean_over_only_ignored_targets_is_nan_with_zero_gradient(name, kw, target) -> None:
    """Every target ignored: torch's mean is 0/0 = nan, and its input gradient is 0, not nan."""
    torch = pytest.importorskip("torch")
    import autogradcli

    x0 = np.arange(8.0).reshape(2, 4) / 3 if isinstance(target, list) else np.arange(4.0) / 3
    outs = []
    for lib in (torch, autogradcli):
        x = lib.tensor(x0, requires_grad=True)
        args = dict(kw)
        if args.pop("weight", False):
            args["weight"] = lib.tensor([0.5, 1.0, 2.0, 3.0], dtype=lib.float64)
        loss = getattr(lib.nn.functional, name)(x, lib.tensor(target), ignore_index=2, **args)
        loss.backward()
        outs.append((loss.item(), x.grad.numpy()))
    (t_loss, t_grad), (a_loss, a_grad) = outs
    assert np.isnan(t_loss) and np.isnan(a_loss)
    np.testing.assert_array_equal(a_grad, t_grad)
