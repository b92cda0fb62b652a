"""``einsum``: Einstein summation over any number of operands, differentiable to any order.

The equation is normalised first (spaces dropped, ``...`` spelled out as letters, the implicit
output made explicit), so forward and backward are plain ``xp.einsum`` calls: the gradient of one
operand is the einsum of the output gradient with the other operands.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from ._util import array_module

__all__ = ["einsum"]

_SPARE = "ZYXWVUTSRQPONMLKJIHGFEDCBA"  # letters for ``...`` dims (programs use lowercase)


def _parse(equation: str, ndims: list[int]) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) != len(ndims):
        raise ValueError(
            "einsum(): more operands were provided than specified in the equation"
            if len(ndims) > len(subs)
            else "einsum(): fewer operands were provided than specified in the equation"
        )
    used = set(eq)
    spare = [c for c in _SPARE if c not in used]
    n_ell = max((n - (len(s) - 3) for s, n in zip(subs, ndims) if "..." in s), default=0)
    ell = "".join(spare[:n_ell][::-1])
    out_subs = []
    for s, n in zip(subs, ndims):
        if "..." in s:
            k = n - (len(s) - 3)
            s = s.replace("...", ell[len(ell) - k :] if k else "")
        if len(s) != n:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(s)}) does not match the "
                f"number of dimensions ({n}) for operand {len(out_subs)}"
                + ("" if "..." in eq else " and no ellipsis was given")
            )
        out_subs.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        letters = "".join(out_subs)
        out = ell + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell)
        )
    return out_subs, out


class Einsum(Function):
    _backward_name = "EinsumBackward"

    @staticmethod
    def forward(ctx: Any, spec: tuple[tuple[str, ...], str], *operands: Tensor) -> Any:
        ctx.spec = spec
        ctx.save_for_backward(*operands)
        subs, out = spec
        xp = array_module(operands[0]._data)
        arrays = [op._data for op in operands]
        return xp.einsum(",".join(subs) + "->" + out, *arrays)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        subs, out = ctx.spec
        ops = ctx.saved_tensors
        grads: list[Any] = [None]
        for i, s in enumerate(subs):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            if len(set(s)) != len(s):
                raise RuntimeError(
                    f"einsum backward: operand {i} repeats an index ('{s}'), which is not supported"
                )
            others = [subs[j] for j in range(len(subs)) if j != i]
            elsewhere = set(out).union(*others) if others else set(out)
            kept = "".join(c for c in s if c in elsewhere)
            grad = Einsum.apply(
                ((out, *others), kept), g, *[ops[j] for j in range(len(subs)) if j != i]
            )
            if kept != s:  # letters summed in this operand alone: the gradient is broadcast
                shape = [ops[i].shape[k] if c in kept else 1 for k, c in enumerate(s)]
                grad = grad.reshape([ops[i].shape[k] for k, c in enumerate(s) if c in kept])
                grad = grad.reshape(shape).expand(*ops[i].shape)
            grads.append(grad)
        return tuple(grads)


def einsum(equation: str, *operands: Any) -> Tensor:
    """``einsum('ij,jk->ik', a, b)``; the operands may also come as one list."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    subs, out = _parse(equation, [op._data.ndim for op in operands])
    return Einsum.apply((tuple(subs), out), *operands)
