"""What a failing gradcheck means: patterns in the Jacobians, kinks, the shape of backward's result.

Tools on top of :func:`gradcheck_report` (``agrad gradcheck`` renders them):

- :func:`diagnose` reads one (output, input) :class:`PairReport` and names the pattern when it is
  clear: the sign flipped (analytical = -numerical), a constant factor (analytical = k *
  numerical, with k = 2, 0.5, 1/N ...), the gradient missing for an input (analytical all zero
  while numerical is not), transposed (analytical matches the numerical Jacobian with the input's
  last two dims swapped), or not summed over a broadcast dimension (only one slice of the output
  contributes, or the mean was taken instead of the sum).
- :func:`find_kinks` takes the failing elements and measures one-sided finite differences: where
  the left and right slopes differ (``relu`` at 0, ``abs`` at 0) and the analytical value lies
  between them, the element is a kink of the function (a valid subgradient), not a failure.
- :func:`check_backward_outputs` calls ``backward`` of a custom Function directly and checks it
  returns one gradient per forward argument, with the input's shape and dtype.
- :func:`fast_projection` is the cheap check for large inputs: ``v^T J u`` for random unit
  vectors, numerically and analytically.

Jacobians are numpy arrays of shape ``(input numel, output numel)`` (PyTorch's layout).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..backend import to_numpy
from ..tensor.tensor import Tensor
from .gradcheck import Mismatch, PairReport
from .jacobians import random_unit

__all__ = [
    "GradIssue",
    "Kink",
    "check_backward_outputs",
    "describe_factor",
    "diagnose",
    "fast_projection",
    "find_kinks",
]


def _close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def _nonzero(x: np.ndarray, atol: float) -> bool:
    return bool(np.any(np.abs(x) > atol))


def describe_factor(k: float) -> str:
    """``2``, ``0.5``, ``1/3``, ``-2``, or ``1.732`` for a factor without a simple fraction."""
    frac = Fraction(k).limit_denominator(64)
    if abs(float(frac) - k) <= 1e-6 * max(1.0, abs(k)):
        if frac.denominator == 1:
            return str(frac.numerator)
        if frac.numerator == 1 or frac.numerator == -1:
            return f"{'-' if frac.numerator < 0 else ''}1/{frac.denominator}"
        return f"{float(frac):g}"
    return f"{k:.4g}"


def _broadcast_dims(input_shape: tuple[int, ...], output_shape: tuple[int, ...]) -> list[int]:
    """Output dims over which an input of ``input_shape`` would be broadcast (size 1 or absent)."""
    if len(input_shape) > len(output_shape):
        return []
    pad = len(output_shape) - len(input_shape)
    full = (1,) * pad + tuple(input_shape)
    dims = []
    for d, (i, o) in enumerate(zip(full, output_shape)):
        if i == o:
            continue
        if i == 1 and o > 1:
            dims.append(d)
        else:
            return []
    return dims


def diagnose(
    pair: PairReport,
    input_name: str = "input",
    output_name: str = "output",
    *,
    grad_was_none: bool = False,
) -> str | None:
    """A one-line explanation of a failing pair when the pattern is clear, else None."""
    if pair.ok:
        return None
    n, a = pair.numerical, pair.analytical
    atol, rtol = pair.atol, pair.rtol
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(a))):
        bad = "analytical" if not np.all(np.isfinite(a)) else "numerical"
        return f"the {bad} Jacobian has nan/inf entries"
    if not _nonzero(a, 0.0) and _nonzero(n, atol):
        what = "returns None" if grad_was_none else "returns zeros"
        return (
            f"gradient missing for {input_name}: backward {what} for it, but {output_name} "
            "depends on it"
        )
    if _nonzero(n, atol) and _close(a, -n, atol, rtol):
        return "sign flipped: analytical ≈ -numerical"
    bdims = _broadcast_dims(pair.input_shape, pair.output_shape)
    nn_ = float(np.sum(n * n))
    if nn_ > 0:
        k = float(np.sum(a * n)) / nn_
        if abs(k - 1) > 1e-3 and abs(k) > 1e-12 and _close(a, k * n, atol, rtol):
            text = f"constant factor: analytical ≈ {describe_factor(k)} * numerical"
            if bdims:
                size = int(np.prod([pair.output_shape[d] for d in bdims]))
                if abs(k * size - 1) < 1e-6:
                    dims = ", ".join(str(d) for d in bdims)
                    return (
                        f"not summed over a broadcast dimension: the gradient for {input_name} "
                        f"is averaged over dim {dims} of {output_name} (size {size}); sum it instead"
                    )
            return text
    if len(pair.input_shape) >= 2 and pair.input_shape[-1] == pair.input_shape[-2]:
        m = n.shape[1]
        nt = np.swapaxes(n.reshape(*pair.input_shape, m), -3, -2).reshape(-1, m)
        if _close(a, nt, atol, rtol):
            return (
                f"transposed: the gradient for {input_name} matches the numerical one with its "
                "last two dims swapped (backward returns the transpose)"
            )
    if bdims:
        out_shape = pair.output_shape
        grid = np.indices(out_shape).reshape(len(out_shape), -1) if out_shape else None
        candidates: list[tuple[str, np.ndarray]] = []
        if grid is not None:
            keep0 = np.all(grid[bdims] == 0, axis=0)
            candidates.append((f"index 0 along dim {', '.join(map(str, bdims))}", keep0))
            for d in bdims:
                for k in (0, out_shape[d] - 1):
                    candidates.append((f"index {k} along dim {d}", grid[d] == k))
        for where, keep in candidates:
            if _close(a, n * keep[None, :], atol, rtol):
                dims = ", ".join(str(d) for d in bdims)
                return (
                    f"not summed over a broadcast dimension: the gradient for {input_name} "
                    f"{tuple(pair.input_shape)} only takes {output_name}'s {where}; sum "
                    f"grad_output over dim {dims} of {output_name} {tuple(out_shape)}"
                )
    return None  # (a transposed non-square gradient has the wrong shape: check_backward_outputs)


@dataclass
class Kink:
    """A failing Jacobian element where the function is not differentiable."""

    mismatch: Mismatch
    left: float  # (f(x) - f(x - eps)) / eps
    right: float  # (f(x + eps) - f(x)) / eps


def find_kinks(
    func: Callable[..., Any],
    inputs: Sequence[Any],
    pair: PairReport,
    eps: float,
    *,
    limit: int = 200,
) -> tuple[list[Kink], list[Mismatch]]:
    """Split ``pair.failures`` into kinks and real failures (one-sided differences).

    An element is a kink when the one-sided slopes differ by more than the tolerance and the
    analytical value lies between them (within the tolerance). At most ``limit`` failures are
    examined; the rest stay failures.
    """
    from .grad_mode import enable_grad, no_grad

    if not pair.failures:
        return [], []
    inputs = tuple(inputs)
    with enable_grad():
        outs = func(*inputs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    pos = positions[pair.output_index]
    arr = inputs[pair.arg_index]._data
    atol, rtol = pair.atol, pair.rtol

    def value(elem: tuple[int, ...]) -> float:
        with no_grad():
            res = func(*inputs)
        res = res if isinstance(res, (tuple, list)) else (res,)
        return float(to_numpy(res[pos]._data)[elem])

    kinks: list[Kink] = []
    rest: list[Mismatch] = []
    for k, m in enumerate(pair.failures):
        if k >= limit:
            rest.extend(pair.failures[k:])
            break
        idx = m.input_element
        orig = arr[idx].copy()
        try:
            f0 = value(m.output_element)
            arr[idx] = orig - eps
            fm = value(m.output_element)
            arr[idx] = orig + eps
            fp = value(m.output_element)
        finally:
            arr[idx] = orig
        left, right = (f0 - fm) / eps, (fp - f0) / eps
        tol = atol + rtol * max(abs(left), abs(right))
        lo, hi = min(left, right), max(left, right)
        if hi - lo > tol and lo - tol <= m.analytical <= hi + tol:
            kinks.append(Kink(m, left, right))
        else:
            rest.append(m)
    return kinks, rest


@dataclass
class GradIssue:
    """A problem with what backward returned for one forward argument."""

    arg_index: int  # position in forward's arguments (after ctx)
    kind: str  # "count" | "missing" | "shape" | "transposed" | "dtype" | "broadcast"
    message: str
    fatal: bool  # the engine would refuse it (the Jacobian check cannot run)


def check_backward_outputs(
    fn: Any, inputs: Sequence[Any], names: Sequence[str] | None = None
) -> tuple[list[GradIssue], int]:
    """Call ``fn.apply(*inputs)`` then ``fn.backward(ctx, *ones)`` directly; check the result.

    Returns the issues and the number of gradients backward returned. ``broadcast`` issues
    (a gradient of a shape that the engine sums down to the input's) are notes, not failures,
    as in PyTorch.
    """
    from ..tensor.factory import ones_like
    from .grad_mode import enable_grad, no_grad

    inputs = tuple(inputs)
    names = list(names) if names is not None else [f"input {i}" for i in range(len(inputs))]
    with enable_grad():
        out = fn.apply(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    ctx = next((o.grad_fn for o in outs if isinstance(o, Tensor) and o.grad_fn), None)
    if ctx is None:
        return [GradIssue(-1, "count", "no output requires grad", True)], 0
    grads_in = [
        ones_like(o.detach()) if isinstance(o, Tensor) and o.dtype.is_floating_point else None
        for o in outs
    ]
    with no_grad():
        res = fn.backward(ctx, *grads_in)
    res = res if isinstance(res, tuple) else (res,)
    issues: list[GradIssue] = []
    if len(res) != len(inputs):
        issues.append(
            GradIssue(
                -1,
                "count",
                f"backward returned {len(res)} gradient{'s' if len(res) != 1 else ''}, but "
                f"forward takes {len(inputs)} argument{'s' if len(inputs) != 1 else ''} "
                f"({', '.join(names)}): return one per argument (None for non-tensors)",
                len(res) < len(inputs) or any(g is not None for g in res[len(inputs) :]),
            )
        )
    for i, (x, g) in enumerate(zip(inputs, res)):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        name = names[i]
        if g is None:
            issues.append(GradIssue(i, "missing", f"backward returned None for {name}", False))
            continue
        if not isinstance(g, Tensor):
            issues.append(
                GradIssue(i, "shape", f"the gradient for {name} is a {type(g).__name__}", True)
            )
            continue
        xs, gs = tuple(x.shape), tuple(g.shape)
        if gs != xs:
            if len(xs) >= 2 and gs == xs[:-2] + (xs[-1], xs[-2]):
                issues.append(
                    GradIssue(
                        i,
                        "transposed",
                        f"the gradient for {name} has shape {gs}, {name} has {xs}: transposed",
                        True,
                    )
                )
            elif _broadcastable(gs, xs):
                issues.append(
                    GradIssue(
                        i,
                        "broadcast",
                        f"the gradient for {name} has shape {gs}; the engine sums it to {xs}",
                        False,
                    )
                )
            else:
                issues.append(
                    GradIssue(
                        i, "shape", f"the gradient for {name} has shape {gs}, {name} has {xs}", True
                    )
                )
        if g.dtype != x.dtype:
            issues.append(
                GradIssue(
                    i, "dtype", f"the gradient for {name} is {g.dtype}, {name} is {x.dtype}", False
                )
            )
    return issues, len(res)


def _broadcastable(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    """Whether a gradient of shape ``src`` sums down to ``dst`` (dst broadcasts to src)."""
    if len(dst) > len(src):
        return False
    pad = (1,) * (len(src) - len(dst)) + tuple(dst)
    return all(d == s or d == 1 for s, d in zip(src, pad))


@dataclass
class Projection:
    """``v^T J u`` for one (output, input) pair in fast mode."""

    output_index: int
    input_index: int
    arg_index: int
    numerical: float
    analytical: float
    allowed: float
    nondet_diff: float

    @property
    def ok(self) -> bool:
        return abs(self.analytical - self.numerical) <= self.allowed


def fast_projection(
    func: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> list[Projection]:
    """Fast-mode check: numerical ``J u`` by one central difference along a random unit ``u``,
    analytical ``v^T J`` by one vector-Jacobian product (run twice, for determinism)."""
    from ..tensor.factory import tensor
    from .engine import grad as autograd_grad
    from .grad_mode import enable_grad

    inputs = tuple(inputs)
    args = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    rng = np.random.default_rng(seed)
    with enable_grad():
        out = func(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    diff_outs = [outs[p] for p in positions]

    us = [random_unit(rng, inputs[i].numel()) for i in args]
    vs = [random_unit(rng, o.numel()) for o in diff_outs]
    numerical: list[list[float]] = []
    for arg, u in zip(args, us):
        arr = inputs[arg]._data
        orig = arr.copy()
        delta = u.reshape(arr.shape).astype(arr.dtype) * eps
        try:
            arr[...] = orig - delta  # with grad: a second-order func calls autograd.grad
            lo = func(*inputs)
            arr[...] = orig + delta
            hi = func(*inputs)
        finally:
            arr[...] = orig
        lo = lo if isinstance(lo, (tuple, list)) else (lo,)
        hi = hi if isinstance(hi, (tuple, list)) else (hi,)
        row = []
        for p, v in zip(positions, vs):
            ju = (to_numpy(hi[p]._data) - to_numpy(lo[p]._data)).reshape(-1) / (2 * eps)
            row.append(float(v @ ju))
        numerical.append(row)
    result = []
    xs = [inputs[i] for i in args]
    for oi, (o, v) in enumerate(zip(diff_outs, vs)):
        vt = tensor(v.reshape(o.shape), dtype=o.dtype).to(o.device)
        g1 = autograd_grad(o, xs, vt, retain_graph=True, allow_unused=True)
        g2 = autograd_grad(o, xs, vt, retain_graph=True, allow_unused=True)
        for ii, (arg, u) in enumerate(zip(args, us)):
            a = 0.0 if g1[ii] is None else float(to_numpy(g1[ii]._data).reshape(-1) @ u)
            nd = 0.0
            if g1[ii] is not None and g2[ii] is not None:
                nd = float(np.abs(to_numpy(g1[ii]._data) - to_numpy(g2[ii]._data)).max())
            num = numerical[ii][oi]
            allowed = atol * float(u.sum()) * float(v.sum()) + rtol * abs(num)
            result.append(Projection(oi, ii, arg, num, a, allowed, nd))
    return result
