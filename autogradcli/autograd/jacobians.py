"""The Jacobians gradcheck compares: numerical ones by central finite differences (perturbing
each input element by ``±eps`` in place, in the input's dtype) and analytical ones built row by
row from vector-Jacobian products with ``autograd.grad``.

Jacobians are float64 numpy arrays of shape ``(input numel, output numel)``, PyTorch's layout.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from ..backend import array_module, to_numpy
from ..tensor.tensor import Tensor, wrap
from .engine import grad as _autograd_grad

__all__ = [
    "analytical_jacobian",
    "as_tuple",
    "check_inputs",
    "differentiable_outputs",
    "float_outputs",
    "numerical_jacobian",
    "numerical_jvp",
    "numerical_vjp",
    "random_unit",
    "vjp",
]


def as_tuple(x: Any) -> tuple[Any, ...]:
    """``x`` as a tuple (a lone value becomes a 1-tuple)."""
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def random_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random non-negative unit vector of ``n`` float64 values (the ``u`` and ``v`` of the
    fast checks)."""
    v = rng.random(n)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


def differentiable_outputs(out: Any) -> list[Tensor]:
    """The outputs of a call that are Tensors requiring grad."""
    return [o for o in as_tuple(out) if isinstance(o, Tensor) and o.requires_grad]


def float_outputs(outputs: list[Any]) -> list[Tensor]:
    """The floating-point Tensors among ``outputs`` (the ones finite differences measure)."""
    return [o for o in outputs if isinstance(o, Tensor) and o._data.dtype.kind in "fV"]


def check_inputs(inputs: tuple[Any, ...]) -> list[int]:
    """Positions of the inputs that require grad; PyTorch's warning and errors."""
    diff = []
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp._data.dtype != np.float64:
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating point "
                    "or complex. This check will likely fail if all the inputs are not of double "
                    "precision floating point or complex. ",
                    stacklevel=3,
                )
            arr = inp._data
            if not all(st > 0 or sz <= 1 for st, sz in zip(arr.strides, arr.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical gradients "
                    "correctly. You should call .contiguous on the input before passing it to "
                    "gradcheck."
                )
            diff.append(idx)
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )
    return diff


def _eval(func: Callable, inputs: tuple[Any, ...], ref: list[Any], eps: float) -> list[np.ndarray]:
    """Run ``func`` and copy out its float outputs (checked against the unperturbed ones)."""
    outs = as_tuple(func(*inputs))
    arrays = []
    for o, r in zip(outs, ref):
        if not (isinstance(o, Tensor) and o._data.dtype.kind in "fV"):
            continue
        if o._data.shape != r._data.shape:
            raise AssertionError(
                "Expected `func` to return outputs with the same shape when inputs are perturbed "
                f"by {eps}, but got: shapes {o.shape} and {r.shape}."
            )
        if o._data.dtype != r._data.dtype:
            raise AssertionError(
                "Expected `func` to return outputs with the same dtype when inputs are perturbed "
                f"by {eps}, but got: dtypes {o.dtype} and {r.dtype}."
            )
        arrays.append(np.array(to_numpy(o._data)))
    return arrays


def _central_difference(
    func: Callable,
    inputs: tuple[Any, ...],
    ref: list[Any],
    eps: float,
    assign: Callable[[Any], Any],
    low: Any,
    high: Any,
    orig: Any,
) -> list[np.ndarray]:
    """``(f(high) - f(low)) / 2 eps`` for every float output, flat; ``assign`` puts a value
    into the perturbed input, which gets ``orig`` back afterwards."""
    assign(low)
    outa = _eval(func, inputs, ref, eps)
    assign(high)
    outb = _eval(func, inputs, ref, eps)
    assign(orig)
    return [((b - a) / (2 * eps)).reshape(-1) for a, b in zip(outa, outb)]


def numerical_jvp(
    func: Callable, inputs: tuple[Any, ...], ref: list[Any], arr: Any, delta: Any, eps: float
) -> list[np.ndarray]:
    """Central difference of every float output when ``arr`` (an input's data) moves by ``delta``."""
    orig = arr.copy()
    assign = partial(arr.__setitem__, Ellipsis)
    return _central_difference(func, inputs, ref, eps, assign, orig - delta, orig + delta, orig)


def numerical_jacobian(
    func: Callable, inputs: tuple[Any, ...], ref: list[Any], arg: int, eps: float
) -> list[np.ndarray]:
    """One (input numel, output numel) float64 Jacobian per float output, for input ``arg``."""
    arr = inputs[arg]._data
    jac = [np.zeros((arr.size, o._data.size)) for o in float_outputs(ref)]
    for k, idx in enumerate(np.ndindex(arr.shape)):
        orig = arr[idx].copy()
        assign = partial(arr.__setitem__, idx)
        columns = _central_difference(func, inputs, ref, eps, assign, orig - eps, orig + eps, orig)
        for j, column in enumerate(columns):
            jac[j][k] = column
    return jac


def vjp(output: Tensor, diff_inputs: list[Tensor], v: Any) -> list[np.ndarray | None]:
    """``v^T J`` for each input (float64 numpy; None where ``output`` does not depend on it)."""
    grads = _autograd_grad(output, diff_inputs, wrap(v), retain_graph=True, allow_unused=True)
    return [None if g is None else np.array(to_numpy(g._data), dtype=np.float64) for g in grads]


def analytical_jacobian(output: Tensor, diff_inputs: list[Tensor]) -> list[np.ndarray]:
    """Row by row: the vector-Jacobian product with each basis vector of the output."""
    jac = [np.zeros((t._data.size, output._data.size)) for t in diff_inputs]
    base = array_module(output._data).zeros_like(output._data)
    flat = base.reshape(-1)
    for r in range(output._data.size):
        flat[...] = 0
        flat[r] = 1
        for j, g in enumerate(vjp(output, diff_inputs, base.copy())):
            if g is not None:
                jac[j][:, r] = g.reshape(-1)
    return jac


def numerical_vjp(
    func: Callable,
    inputs: tuple[Any, ...],
    ref: list[Any],
    arg: int,
    eps: float,
    vs: list[Any],
    elements: np.ndarray | None = None,
) -> list[np.ndarray]:
    """``v^T J`` by central differences for input ``arg``, one flat float64 vector per ``v``
    (``vs``: one flat vector per float output, None to skip it), at the flat input ``elements``
    (all when None); the Jacobian is never stored."""
    arr = inputs[arg]._data
    flat = range(arr.size) if elements is None else elements
    result = [np.zeros(len(flat)) for _ in vs]
    for k, r in enumerate(flat):
        idx = np.unravel_index(int(r), arr.shape)
        orig = arr[idx].copy()
        assign = partial(arr.__setitem__, idx)
        columns = _central_difference(func, inputs, ref, eps, assign, orig - eps, orig + eps, orig)
        for j, (v, column) in enumerate(zip(vs, columns)):
            if v is not None:  # not v @ column: BLAS threads cost more than this sum
                result[j][k] = (v * column).sum()
    return result
