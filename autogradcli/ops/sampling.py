"""Random sampling from tensors of parameters: ``normal``, ``bernoulli``, ``multinomial``.

Draws come from the global generator (``manual_seed``) or a ``Generator``. ``normal`` with tensor
parameters is differentiable as PyTorch's is (mean + std * eps, eps held fixed); the discrete
samplers return values with no gradient.
"""

from __future__ import annotations

import math
from typing import Any

from .. import backend
from ..tensor import dtype as dtypes
from ..tensor.creation_args import require_float, size_of, torch_type_name
from ..tensor.random import rng_for
from ..tensor.tensor import Tensor, wrap
from ._util import array_module

__all__ = ["bernoulli", "multinomial", "normal"]


def _rng(xp: Any, generator: Any) -> Any:
    return rng_for(xp, generator)


def _finish(out: Tensor, target: Any) -> Tensor:
    if target is None:
        return out
    from ..autograd import no_grad

    with no_grad():
        if tuple(target.shape) != tuple(out.shape):
            target.resize_(*out.shape)
        target.copy_(out)
    return target


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Samples of N(mean, std**2): tensor parameters broadcast to the output's shape; two numbers
    and ``size`` give a new tensor of that size."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments: two numbers need size="
            )
        shape = size_of(size, "normal")
        if float(std) < 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
        xp = backend.module_for(device)
        np_dtype = (dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()).np
        require_float(np_dtype, "normal")
        eps = xp.asarray(_rng(xp, generator).standard_normal(shape)).astype(np_dtype, copy=False)
        arr = eps * np_dtype.type(float(std)) + np_dtype.type(float(mean))
        result = wrap(xp.asarray(arr, dtype=np_dtype))
        if requires_grad:
            result.requires_grad = True
        return _finish(result, out)
    if size is not None:
        raise TypeError(
            "normal() received an invalid combination of arguments: size= goes with two numbers, "
            "not with tensor mean or std (their broadcast shape is the output's)"
        )
    for t in (mean, std):
        if isinstance(t, Tensor) and t._data.dtype.kind not in "fV":
            raise NotImplementedError(
                f"normal() draws floating point values and is not implemented for dtype "
                f"'{torch_type_name(t._data.dtype)}' ({t._data.dtype.name}); pass floating point "
                f"mean and std"
            )
    ref = mean if isinstance(mean, Tensor) else std
    if isinstance(std, Tensor):
        if bool((std._data < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif float(std) < 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    xp = array_module(ref._data)
    shape = _broadcast_shape(mean, std)
    eps = xp.asarray(_rng(xp, generator).standard_normal(shape)).astype(ref._data.dtype)
    eps_t = wrap(eps)
    if isinstance(std, Tensor):
        result = mean + std * eps_t
    else:
        result = mean + eps_t * float(std)
    return _finish(result, out)


def _broadcast_shape(a: Any, b: Any) -> tuple[int, ...]:
    """The shape of ``a`` and ``b`` broadcast together, or PyTorch's RuntimeError naming the
    sizes that do not match."""
    import numpy as np

    shapes = [t._data.shape for t in (a, b) if isinstance(t, Tensor)]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        sa, sb = shapes
        for i in range(1, min(len(sa), len(sb)) + 1):
            if sa[-i] != sb[-i] and 1 not in (sa[-i], sb[-i]):
                raise RuntimeError(
                    f"The size of tensor a ({sa[-i]}) must match the size of tensor b ({sb[-i]}) "
                    f"at non-singleton dimension {max(len(sa), len(sb)) - i}"
                ) from None
        raise


def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None, out: Any = None) -> Tensor:
    """0/1 draws with probability ``input`` (or the number ``p``), in ``input``'s dtype."""
    arr = input._data
    if p is None and arr.dtype.kind not in "fV":
        raise NotImplementedError(
            f"bernoulli() reads probabilities from a floating point input, not dtype "
            f"'{torch_type_name(arr.dtype)}' ({arr.dtype.name}); convert it or pass p="
        )
    xp = array_module(arr)
    prob = arr if p is None else xp.full(arr.shape, float(p), dtype=arr.dtype)
    if bool(((prob < 0) | (prob > 1)).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draw = _rng(xp, generator).random(arr.shape)
    return _finish(wrap(xp.asarray(draw < prob).astype(arr.dtype)), out)


def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Any = None,
    out: Any = None,
) -> Tensor:
    """Indices drawn by the non-negative weights of each row of ``input`` (1-D or 2-D), int64."""
    arr = input._data
    if arr.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if arr.dtype.kind not in "fV":
        raise RuntimeError("multinomial only supports floating-point dtypes for input")
    n = arr.shape[-1]
    k = int(num_samples)
    if k <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and k > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    xp = array_module(arr)
    rows = arr.reshape(-1, n).astype("float64")
    if bool((rows < 0).any()) or not bool(xp.isfinite(rows).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = rows.sum(axis=1, keepdims=True)
    if bool((totals <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(xp, generator)
    if replacement:
        cdf = xp.cumsum(rows / totals, axis=1)
        u = xp.asarray(rng.random((rows.shape[0], k)))
        idx = (cdf[:, None, :] <= u[:, :, None]).sum(axis=2)
        idx = xp.minimum(idx, n - 1)
    else:
        # an exponential race: the k smallest Exp(1) / w are a draw without replacement; when
        # the positive weights run out, zero-weight classes follow (PyTorch returns them too)
        e = xp.asarray(rng.standard_exponential(rows.shape))
        with_weight = rows > 0
        keys = xp.where(with_weight, e / xp.where(with_weight, rows, 1.0), math.inf)
        idx = xp.argsort(keys, axis=1, kind="stable")[:, :k]
    idx = idx.astype("int64").reshape(arr.shape[:-1] + (k,))
    return _finish(wrap(idx), out)


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill with 0/1 draws, 1 with probability ``p`` (a number or a tensor of probabilities)."""
    from .inplace import apply_inplace

    arr = self._data
    xp = array_module(arr)
    prob = p._data if isinstance(p, Tensor) else float(p)
    if not isinstance(p, Tensor) and not 0 <= prob <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    if isinstance(p, Tensor) and bool(xp.any((prob < 0) | (prob > 1))):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = wrap(xp.asarray(_rng(xp, generator).random(arr.shape) < prob).astype(arr.dtype))
    return apply_inplace(self, "bernoulli_", lambda s: s * 0 + draws)


TENSOR_METHODS: dict[str, Any] = {
    "bernoulli_": bernoulli_,
    "bernoulli": bernoulli,
    "multinomial": multinomial,
}
