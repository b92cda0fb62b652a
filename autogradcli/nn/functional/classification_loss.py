"""Classification losses over class indices (or class probabilities): ``nll_loss`` and
``cross_entropy`` as fused Functions whose backwards use Tensor ops (so ``create_graph=True``
gives second derivatives)."""

from __future__ import annotations

from typing import Any

from ...autograd.function import Function
from ...autograd.grad_mode import STATE
from ...backend import array_module
from ...ops.statistics import logsumexp
from ...ops.unary import exp
from ...tensor.tensor import Tensor, wrap
from .loss_reduction import finish_reduction, resolve_reduction, upstream_grad

__all__ = ["cross_entropy", "nll_loss"]


def _class_dim(input: Tensor) -> int:
    """The class dimension: 1 for batched input, 0 for a single sample."""
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    return 0 if input.ndim == 1 else 1


def _check_class_target(input: Tensor, target: Tensor, cdim: int) -> None:
    """PyTorch's errors for class-index targets of the wrong dtype or shape."""
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {target.dtype.name.capitalize()}"
        )
    shape, tshape = tuple(input.shape), tuple(target.shape)
    expected = shape[:cdim] + shape[cdim + 1 :]
    if input.ndim == 2 and target.ndim >= 1 and shape[0] != tshape[0]:
        raise ValueError(
            f"Expected input batch_size ({shape[0]}) to match target batch_size ({tshape[0]})."
        )
    if tshape != expected:
        raise RuntimeError(
            f"Expected target size {list(expected)}, got {list(tshape)} (input of shape "
            f"{list(shape)})"
        )


def _class_weight(input: Tensor, weight: Tensor | None, cdim: int) -> Any:
    """The class weights as an array of the input's dtype, or None."""
    if weight is None:
        return None
    n = input.shape[cdim]
    if weight.shape != (n,):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    return weight._data.astype(input._data.dtype, copy=False)


def _unsqueezed(arr: Any, dim: int) -> Any:
    """``arr`` with a new axis of size 1 at ``dim`` (numpy's expand_dims, without its 5 us of
    argument handling per call: a char-RNN step calls it three times)."""
    return arr.reshape(arr.shape[:dim] + (1,) + arr.shape[dim:])


def _along(arr: Any, cdim: int, ndim: int) -> Any:
    """A (C,) array shaped to broadcast along the class dim of an ``ndim`` array."""
    return arr.reshape((1,) * cdim + (-1,) + (1,) * (ndim - cdim - 1))


class _Targets:
    """Class-index targets resolved against the input: valid mask, safe indices, weights."""

    def __init__(self, xp: Any, t: Any, w: Any, ignore_index: int, n: int, dtype: Any) -> None:
        valid = t != ignore_index
        tc = xp.where(valid, t, 0)
        bad = (tc < 0) | (tc >= n)
        if bool(bad.any()):
            raise IndexError(f"Target {int(tc[bad].ravel()[0])} is out of bounds.")
        self.valid, self.tc = valid, tc
        self.wy = (w[tc] * valid) if w is not None else valid.astype(dtype)

    def onehot(self, xp: Any, n: int, cdim: int, ndim: int) -> Any:
        """The bool one-hot of the (safe) targets, classes along ``cdim``."""
        idx = _unsqueezed(self.tc, cdim)
        return _along(xp.arange(n), cdim, ndim) == idx

    def nll(self, xp: Any, logp: Any, cdim: int) -> Any:
        """``-weight[t] * logp[t]`` per sample (zero where the target is ignored)."""
        picked = xp.take_along_axis(logp, _unsqueezed(self.tc, cdim), axis=cdim)
        return -(self.wy * picked.squeeze(cdim))


class NllLoss(Function):
    """``-weight[t] * input[t]`` per sample, reduced (mean divides by the summed weights)."""

    _backward_name = "NllLossBackward0"

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, target: Tensor, w: Any, ignore_index: int, reduction: str
    ) -> Any:
        arr = x._data
        xp = array_module(arr)
        cdim = 0 if arr.ndim == 1 else 1
        n = arr.shape[cdim]
        t = target._data
        ctx.reduction = reduction
        if w is None and reduction == "mean" and cdim == 1 and _plain_targets(t, ignore_index, n):
            # the general path's values without its masks: -sum(x[i, t_i]) / N
            rows = t.shape[0]
            ctx.plain, ctx.shape, ctx.denom = t, arr.shape, arr.dtype.type(rows)
            return xp.asarray(-arr[xp.arange(rows), t].sum() / ctx.denom)
        ctx.plain = None
        tg = _Targets(xp, t, w, ignore_index, n, arr.dtype)
        loss = tg.nll(xp, arr, cdim)
        denom = tg.wy.sum()
        ctx.cdim, ctx.n, ctx.ndim, ctx.targets = cdim, n, arr.ndim, tg
        ctx.denom = denom
        return finish_reduction(xp, loss, reduction, denom)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        xp = array_module(g._data)
        t = ctx.plain
        if t is not None:  # the general coefficients, -1 at each target, without the masks
            coef = xp.zeros(ctx.shape, g._data.dtype)
            coef[xp.arange(t.shape[0]), t] = -1.0
            return wrap(coef) * upstream_grad(g, "mean", float(ctx.denom)), None, None, None, None
        tg, cdim = ctx.targets, ctx.cdim
        # 0 - w: +0.0 off the targets, as torch (a negation would give -0.0)
        coef = 0.0 - tg.onehot(xp, ctx.n, cdim, ctx.ndim) * _unsqueezed(tg.wy, cdim)
        gx = wrap(coef.astype(g._data.dtype, copy=False)) * upstream_grad(
            g, ctx.reduction, float(ctx.denom), cdim
        )
        return gx, None, None, None, None


class CrossEntropy(Function):
    """``log_softmax`` and the (label-smoothed, weighted) negative log-likelihood in one pass.

    The loss is ``-sum_c A[i, c] * log_softmax(x)[i, c]`` per sample for a coefficient matrix
    ``A`` (one-hot targets, smoothing and class weights, or probability targets), so the input
    gradient is ``softmax(x) * A.sum(c) - A``. Backward recomputes softmax with Tensor ops when a
    graph is being built (double backward), and uses the saved softmax otherwise.
    """

    _backward_name = "NllLossBackward0"

    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        target: Tensor,
        w: Any,
        ignore_index: int,
        reduction: str,
        smoothing: float,
    ) -> Any:
        arr = x._data
        xp = array_module(arr)
        cdim = 0 if arr.ndim == 1 else 1
        n = arr.shape[cdim]
        z = arr - arr.max(axis=cdim, keepdims=True)
        e = xp.exp(z)
        s = e.sum(axis=cdim, keepdims=True)
        ctx.cdim, ctx.n, ctx.ndim, ctx.w = cdim, n, arr.ndim, w
        ctx.reduction, ctx.smoothing = reduction, smoothing
        ctx.probs = target._data.dtype.kind in "fV"
        ctx.targets = None
        if not ctx.probs and w is None and smoothing == 0 and reduction == "mean" and cdim == 1:
            out = _plain_mean_nll(ctx, xp, z, s, target._data, ignore_index)
            if out is not None:
                ctx.save_for_backward(x, None)
                if ctx.needs_input_grad[0]:
                    e /= s
                    ctx.softmax = e
                return out
        logp = z
        logp -= xp.log(s)
        if ctx.probs:
            t = target._data
            if smoothing > 0:
                t = t * (1 - smoothing) + smoothing / n
            a = t if w is None else t * _along(w, cdim, arr.ndim)
            loss = -(logp * a).sum(axis=cdim)
            denom = arr.size // n
            ctx.save_for_backward(x, target)
            ctx.logp = logp if ctx.needs_input_grad[1] else None
        else:
            tg = _Targets(xp, target._data, w, ignore_index, n, arr.dtype)
            loss = tg.nll(xp, logp, cdim)
            if smoothing > 0:
                lw = logp if w is None else logp * _along(w, cdim, arr.ndim)
                smooth = -(lw.sum(axis=cdim) * tg.valid)
                loss = loss * (1 - smoothing) + smooth * (smoothing / n)
            denom = tg.wy.sum()
            ctx.targets = tg
            ctx.save_for_backward(x, None)
        ctx.denom = denom
        if ctx.needs_input_grad[0]:
            e /= s
            ctx.softmax = e
        return finish_reduction(xp, loss, reduction, denom)

    @staticmethod
    def _coefficients(ctx: Any, xp: Any, dtype: Any) -> Any:
        """The constant coefficient matrix ``A`` of class-index targets."""
        if ctx.targets is None:  # the plain case's targets, resolved only when needed
            ctx.targets = _Targets(xp, ctx.target_arr, None, -1, ctx.n, dtype)
        tg, cdim, n, ndim = ctx.targets, ctx.cdim, ctx.n, ctx.ndim
        eps = ctx.smoothing
        a = tg.onehot(xp, n, cdim, ndim) * _unsqueezed(tg.wy * (1 - eps), cdim)
        if eps > 0:
            wc = xp.ones(n, dtype=dtype) if ctx.w is None else ctx.w
            a = a + _along(wc, cdim, ndim) * _unsqueezed(tg.valid * (eps / n), cdim)
        return a.astype(dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        x, target = ctx.saved_tensors
        cdim, w = ctx.cdim, ctx.w
        xp = array_module(x._data)
        dtype = x._data.dtype
        up = upstream_grad(g, ctx.reduction, float(ctx.denom), cdim)
        need_x, need_t = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        wt = None if w is None else wrap(_along(w, cdim, ctx.ndim))
        graph = STATE.enabled
        if not graph and ctx.targets is None and not ctx.probs:
            if not need_x:
                return None, None, None, None, None, None
            # the plain case: softmax minus the one-hot, times the upstream share, in place
            gx = ctx.softmax.copy()
            t = ctx.target_arr
            gx[xp.arange(t.shape[0]), t] -= 1.0
            gx *= up._data
            return wrap(gx), None, None, None, None, None
        if ctx.probs:
            a = target
            if ctx.smoothing > 0:
                a = a * (1 - ctx.smoothing) + ctx.smoothing / ctx.n
            if wt is not None:
                a = a * wt
        else:
            a = wrap(CrossEntropy._coefficients(ctx, xp, dtype))
        gx = gt = None
        if need_x:
            if graph:
                p = exp(x - logsumexp(x, cdim, keepdim=True))
            else:
                p = wrap(ctx.softmax)
            gx = (p * a.sum(cdim, keepdim=True) - a) * up
        if need_t:
            if graph or ctx.logp is None:
                logp = x - logsumexp(x, cdim, keepdim=True)
            else:
                logp = wrap(ctx.logp)
            gt = -(logp if wt is None else logp * wt) * (up * (1 - ctx.smoothing))
        return gx, gt, None, None, None, None


def _plain_mean_nll(ctx: Any, xp: Any, z: Any, s: Any, t: Any, ignore_index: int) -> Any:
    """The mean loss of a (N, C) batch whose targets are all in range and none ignored, from
    only the picked log-probabilities (the same values as the general path); None otherwise."""
    if not _plain_targets(t, ignore_index, z.shape[1]):
        return None
    rows = t.shape[0]
    loss = -(z[xp.arange(rows), t] - xp.log(s[:, 0]))
    denom = z.dtype.type(rows)
    ctx.target_arr, ctx.denom = t, denom
    return xp.asarray(loss.sum() / denom)


def _plain_targets(t: Any, ignore_index: int, n: int) -> bool:
    """Whether class indices ``t`` are one non-empty row, all in ``[0, n)`` and none ignored
    (``ignore_index`` outside that range): the case the fused losses take without masks."""
    if t.ndim != 1 or t.shape[0] == 0 or 0 <= ignore_index < n:
        return False
    # unsigned, a negative index is past n: one comparison instead of min and max
    u = t.view(f"u{t.dtype.itemsize}") if t.dtype.kind == "i" else t
    return not bool((u >= n).any())


def _index_args(name: str, input: Tensor, target: Tensor, weight: Tensor | None) -> tuple[int, Any]:
    """The class dim and the class-weight array, after checking ``target`` is a Tensor."""
    cdim = _class_dim(input)
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: target must be a Tensor, got {type(target).__name__}")
    return cdim, _class_weight(input, weight, cdim)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``
    (classes on dim 1, or dim 0 unbatched); ``mean`` divides by the summed target weights."""
    reduction = resolve_reduction(reduction, size_average, reduce)
    cdim, w = _index_args("nll_loss", input, target, weight)
    _check_class_target(input, target, cdim)
    return NllLoss.apply(input, target, w, ignore_index, reduction)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy between logits ``input`` and class indices or class probabilities."""
    reduction = resolve_reduction(reduction, size_average, reduce)
    cdim, w = _index_args("cross_entropy", input, target, weight)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if target._data.dtype.kind in "fV":
        if target.shape != input.shape:
            raise RuntimeError(
                f"cross_entropy: probability targets must have the input's shape "
                f"{list(input.shape)}, got {list(target.shape)}"
            )
        if target._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"expected scalar type {input.dtype.name.capitalize()} but found "
                f"{target.dtype.name.capitalize()}"
            )
    else:
        _check_class_target(input, target, cdim)
    return CrossEntropy.apply(input, target, w, ignore_index, reduction, float(label_smoothing))
