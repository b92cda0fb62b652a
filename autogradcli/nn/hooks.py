"""Module backward hooks at the module boundary, as PyTorch's ``BackwardHook``.

Identity autograd Functions wrap the tensors going into and coming out of ``forward``. In
backward, the output-side node sees the module's ``grad_output`` (and runs the backward pre-hooks),
the input-side node sees its ``grad_input`` (and runs the full backward hooks); values the hooks
return replace the gradients that flow on.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from ..tensor.tensor import Tensor

__all__: list[str] = []


class BackwardHookFunction(Function):
    """Returns its tensor arguments unchanged; its backward calls ``ctx.on_backward(grads)``."""

    _backward_name = "BackwardHookFunctionBackward"

    @staticmethod
    def forward(ctx: Any, on_backward: Any, *tensors: Tensor) -> Any:
        ctx.on_backward = on_backward
        ctx.set_materialize_grads(False)
        return tuple(tensors)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        out = ctx.on_backward(grads)
        return (None, *(grads if out is None else out))


def _pack(indices: list[int], values: tuple[Any, ...], size: int) -> tuple[Any, ...]:
    res: list[Any] = [None] * size
    for i, v in zip(indices, values):
        res[i] = v
    return tuple(res)


class BackwardHook:
    """One module call's backward hooks: call ``setup_input_hook`` on the forward's positional
    arguments and ``setup_output_hook`` on its result."""

    def __init__(self, module: Any, user_hooks: list[Callable], user_pre_hooks: list[Callable]):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = self.n_outputs = -1
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    def _wrap(self, on_backward: Callable, args: tuple[Any, ...]) -> tuple[Any, Any]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a._requires_grad]
        if not (STATE.enabled and index):
            return args, None
        new = BackwardHookFunction.apply(on_backward, *[args[i] for i in index])
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def _on_input_grads(self, grads: tuple[Any, ...]) -> Any:
        if self.grad_outputs is None:  # the gradient reached the inputs without the outputs
            return None
        assert self.input_index is not None
        res = _pack(self.input_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, "
                    f"got {len(out)}, but expected {len(res)}"
                )
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)

    def _on_output_grads(self, grads: tuple[Any, ...]) -> Any:
        assert self.output_index is not None
        self.grad_outputs = _pack(self.output_index, grads, self.n_outputs)
        expected = len(self.grad_outputs)
        for hook in self.user_pre_hooks:
            out = hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != expected:
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, "
                    f"got {len(out)}, but expected {expected}"
                )
            self.grad_outputs = tuple(out)
        local = self.grad_outputs
        if self.input_index is None:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module "
                "outputs since no inputs require gradients. See "
                "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.register_full_backward_hook for more details.",
                stacklevel=2,
            )
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should always "
                        "return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_index)

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        res, index = self._wrap(self._on_input_grads, args)
        self.n_inputs = len(args)
        self.input_index = index
        return res

    def setup_output_hook(self, result: Any) -> Any:
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, index = self._wrap(self._on_output_grads, args)
        self.n_outputs = len(args)
        self.output_index = index
        return res if is_tuple else res[0]
