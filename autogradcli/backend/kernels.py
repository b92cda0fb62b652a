"""Fused elementwise kernels: each defined once, as a Python body of ``xp`` ufunc calls.

On the CPU a body runs as it reads: numpy ufuncs with ``out=`` into the caller's arrays or reused
scratch buffers, so there are no temporaries and the arithmetic is the same, op for op, as the
unfused code it replaced. On CUDA the same body is traced by ``cupy.fuse`` into one kernel: every
intermediate stays in registers and each array is read and written once per call.

Why ``cupy.fuse`` and not ``cupy.ElementwiseKernel``: a fused function is a Python function of
ufuncs, so one definition serves numpy and cupy (Chainer's single code path), where an
``ElementwiseKernel`` is CUDA C source that would need a numpy twin kept in step by hand.
``cupy.fuse`` has what the kernels need: ufunc calls with ``out=`` an argument (that argument is
updated in place), ``a[...] = b`` copies, several outputs, and Python scalar arguments that are
weakly typed (float32 stays float32, as with numpy's NEP 50 promotion). Its limits shape the
bodies: no Python branching on values (flags that choose a formula are fixed per kernel, so
each combination is its own cached kernel), no reductions or indexing, and scalar coefficients
computed by the caller in Python (``1 - beta``, ``-lr``), so the device does no scalar math.

A body's scratch buffers come from ``scratch(slot)``: the caller's reusable workspace array on
the CPU and ``None`` under ``cupy.fuse`` (``out=None`` gives a register there). A body therefore
always rebinds results (``t = xp.multiply(a, b, out=t)``) rather than relying on ``out=``.
cupy is never imported here: the CUDA module comes from the registry, and only when a device
array arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import Any

import numpy as np

from .registry import array_module

Scratch = Callable[[int], Any]

__all__ = [
    "Kernel",
    "adam_kernel",
    "decayed_grad",
    "lerp",
    "sgd_kernel",
    "sigmoid",
    "sigmoid_backward",
    "tanh_backward",
]


def _no_scratch(slot: int) -> None:
    return None


class Kernel:
    """An elementwise kernel from one ``body(xp, scratch, *args)``, called with arrays and Python
    scalars (positional, as ``cupy.fuse`` takes them).

    ``kernel(*args)`` runs it with no workspace (CPU results are fresh arrays);
    ``kernel.on[xp](scratch, *args)`` runs it for arrays of module ``xp`` with the CPU workspace
    ``scratch(slot)`` (a device ignores it): the optimizers' per-parameter hot path, one dict
    lookup and no Python frame of its own on the CPU.
    """

    __slots__ = ("body", "name", "on")

    def __init__(self, name: str, body: Callable[..., Any]) -> None:
        self.name = name
        self.body = body
        self.on = _Runners(self)

    def __call__(self, *args: Any) -> Any:
        if type(args[0]) is np.ndarray:
            return self.body(np, _no_scratch, *args)
        return self.on[array_module(args[0])](_no_scratch, *args)

    def run(self, scratch: Scratch, *args: Any) -> Any:
        """``kernel.on[module of args[0]](scratch, *args)``."""
        return self.on[array_module(args[0])](scratch, *args)

    def __repr__(self) -> str:
        return f"<Kernel {self.name}>"


class _Runners(dict):
    """Array module -> ``run(scratch, *args)``: the body itself on numpy; on a device module its
    ``fuse`` of the body (compiled by cupy on first use per argument dtypes, then cached)."""

    def __init__(self, kernel: Kernel) -> None:
        super().__init__({np: partial(kernel.body, np)})
        self._kernel = kernel

    def __missing__(self, xp: Any) -> Callable[..., Any]:
        body = self._kernel.body

        def traced(*a: Any) -> Any:
            return body(xp, _no_scratch, *a)

        fused = xp.fuse(kernel_name=self._kernel.name)(traced)

        def run(scratch: Scratch, *args: Any) -> Any:
            return fused(*args)

        self[xp] = run
        return run


# ------------------------------------------------------------------ shared pieces of bodies
def decayed_grad(
    xp: Any, scratch: Scratch, w: Any, g: Any, wd: Any, maximize: bool, decay: bool
) -> Any:
    """The gradient a step follows: ``g`` negated under ``maximize``, plus ``wd * w`` when
    ``decay`` (L2); ``g`` itself when neither applies (it is never written), else slot 0."""
    if maximize:
        g = xp.negative(g, out=scratch(0))
        if decay:
            g = xp.add(g, xp.multiply(w, wd, out=scratch(1)), out=g)
    elif decay:
        t = scratch(0)
        g = xp.add(g, xp.multiply(w, wd, out=t), out=t)
    return g


def lerp(xp: Any, dst: Any, end: Any, coef: Any, tmp: Any, from_end: bool) -> Any:
    """``dst.lerp_(end, weight)`` in place with PyTorch's two-sided formula: ``dst + (end - dst)
    * weight`` (``coef = weight``) while ``|weight| < 0.5``, else ``end - (end - dst) * (1 -
    weight)`` (``from_end``, ``coef = 1 - weight``). ``tmp`` is scratch; returns ``dst``."""
    tmp = xp.subtract(end, dst, out=tmp)
    tmp = xp.multiply(tmp, coef, out=tmp)
    if from_end:
        return xp.subtract(end, tmp, out=dst)
    return xp.add(dst, tmp, out=dst)


# ------------------------------------------------------------------ optimizer updates
@cache
def sgd_kernel(maximize: bool, decay: bool, momentum: str, damped: bool, nesterov: bool) -> Kernel:
    """PyTorch's SGD update of one parameter, in place on ``w`` (and the momentum buffer).

    ``momentum`` is ``"none"``, ``"first"`` (the buffer is set to the gradient) or ``"next"``
    (``buf = momentum * buf + (1 - dampening) * g``, ``damped`` when dampening is non-zero).
    Arguments: ``w, grad, buf, wd, momentum, 1 - dampening, -lr`` (``buf`` None without momentum).
    CPU scratch slots 0-1 (the decayed gradient), 2 (damping, Nesterov) and 3 (the update).
    """

    adjust = maximize or decay  # the flags, read once here: the body runs per parameter
    first, following = momentum == "first", momentum == "next"
    nest = nesterov and momentum != "none"

    def sgd(
        xp: Any,
        scratch: Scratch,
        w: Any,
        grad: Any,
        buf: Any,
        wd: Any,
        mom: Any,
        keep: Any,
        neg_lr: Any,
    ) -> None:
        g = decayed_grad(xp, scratch, w, grad, wd, maximize, decay) if adjust else grad
        if first:
            buf[...] = g
        elif following:
            buf = xp.multiply(buf, mom, out=buf)
            if damped:
                buf = xp.add(buf, xp.multiply(g, keep, out=scratch(2)), out=buf)
            else:
                buf = xp.add(buf, g, out=buf)
        if nest:
            t = xp.multiply(buf, mom, out=scratch(2))
            g = xp.add(g, t, out=t)
        elif buf is not None:
            g = buf
        xp.add(w, xp.multiply(g, neg_lr, out=scratch(3)), out=w)

    return Kernel(f"sgd_{'m' if maximize else ''}{'d' if decay else ''}_{momentum}", sgd)


@cache
def adam_kernel(
    maximize: bool, decay: bool, decoupled: bool, from_end: bool, amsgrad: bool
) -> Kernel:
    """PyTorch's Adam/AdamW update of one parameter, in place on ``w``, ``m``, ``v`` (and
    ``vmax`` under AMSGrad).

    ``decay``: L2 decay folded into the gradient (Adam); ``decoupled``: ``w *= 1 - lr * wd``
    first (AdamW); ``from_end``: the side of ``m.lerp_(g, 1 - beta1)`` (see ``lerp``).
    Arguments: ``w, grad, m, v, vmax, wd, 1 - lr * wd, lerp coef, beta2, 1 - beta2,
    sqrt(bias_correction2), eps, -lr / bias_correction1``. CPU scratch slots 0-2.
    """

    adjust = maximize or decay

    def adam(
        xp: Any,
        scratch: Scratch,
        w: Any,
        grad: Any,
        m: Any,
        v: Any,
        vmax: Any,
        wd: Any,
        keep_w: Any,
        coef: Any,
        beta2: Any,
        one_minus_beta2: Any,
        bc2_sqrt: Any,
        eps: Any,
        neg_step: Any,
    ) -> None:
        g = decayed_grad(xp, scratch, w, grad, wd, maximize, decay) if adjust else grad
        if decoupled:
            xp.multiply(w, keep_w, out=w)
        t1 = scratch(1)
        lerp(xp, m, g, coef, t1, from_end)
        v = xp.multiply(v, beta2, out=v)
        t1 = xp.multiply(g, one_minus_beta2, out=t1)
        t1 = xp.multiply(t1, g, out=t1)
        v = xp.add(v, t1, out=v)
        if amsgrad:
            v = xp.maximum(vmax, v, out=vmax)
        denom = xp.sqrt(v, out=t1)
        denom = xp.divide(denom, bc2_sqrt, out=denom)
        denom = xp.add(denom, eps, out=denom)
        upd = xp.multiply(m, neg_step, out=scratch(2))
        upd = xp.divide(upd, denom, out=upd)
        xp.add(w, upd, out=w)

    flags = "".join(
        c for c, on in zip("mdwea", (maximize, decay, decoupled, from_end, amsgrad)) if on
    )
    return Kernel(f"adam_{flags}", adam)


# ------------------------------------------------------------------ activations
# Each is its own body: called plainly it runs numpy (one Python frame, as cheap as inline code
# on tiny arrays) or hands a device array to its fused kernel, which traces the same function with
# ``xp`` given. Operators, not ufunc calls with ``out=``: as fast on numpy, traced alike by cupy.
def sigmoid(x: Any, xp: Any = None) -> Any:
    """``1 / (1 + exp(-x))`` as ``0.5 * tanh(0.5 * x) + 0.5``: exact, and stable where
    ``exp(-x)`` overflows; one temporary, updated in place (numpy's 0-d results are scalars,
    which have no ``out=``)."""
    if xp is None:
        if type(x) is not np.ndarray:
            return _SIGMOID(x)
        xp = np
    t = x * 0.5
    if not t.ndim:
        return xp.tanh(t) * 0.5 + 0.5
    t = xp.tanh(t, out=t)
    t *= 0.5
    t += 0.5
    return t


def sigmoid_backward(g: Any, y: Any, xp: Any = None) -> Any:
    """``g * y * (1 - y)``: sigmoid's gradient from its output ``y``, as a new array."""
    if xp is None and type(g) is not np.ndarray:
        return _SIGMOID_BACKWARD(g, y)  # traces this function again, with xp given
    out = g * y
    out *= 1.0 - y
    return out


def tanh_backward(g: Any, y: Any, xp: Any = None) -> Any:
    """``g * (1 - y * y)``: tanh's gradient from its output ``y``, as a new array."""
    if xp is None:
        if type(g) is not np.ndarray:
            return _TANH_BACKWARD(g, y)
        xp = np
    t = y * y
    # in place into t, except on numpy's 0-d results, which are scalars (numpy has no out= there)
    t = xp.subtract(1.0, t, out=t) if t.ndim else 1.0 - t
    if g.dtype != t.dtype:  # a float64 upstream gradient over a float32 output promotes
        return g * t
    t *= g
    return t


_SIGMOID = Kernel("sigmoid", lambda xp, scratch, x: sigmoid(x, xp))
_SIGMOID_BACKWARD = Kernel("sigmoid_backward", lambda xp, scratch, g, y: sigmoid_backward(g, y, xp))
_TANH_BACKWARD = Kernel("tanh_backward", lambda xp, scratch, g, y: tanh_backward(g, y, xp))
