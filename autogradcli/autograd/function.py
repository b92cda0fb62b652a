"""``Function``: PyTorch's custom-op API (static ``forward(ctx, ...)``/``backward(ctx, *grads)``).

Every built-in op is a Function too, so ``apply`` is the one way an operation enters the graph:
it runs ``forward`` with recording off, wraps array results as Tensors and, when an input
requires grad, makes the ``ctx`` (a node, see node.py) the outputs' ``grad_fn``. The recording
itself is in record.py; the one/two-argument entry points of the built-in ops in fixed_arity.py.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from ..tensor.tensor import Tensor, wrap
from .grad_mode import STATE, no_grad
from .node import BackwardNode, FunctionCtx
from .record import run_function

__all__ = ["Function", "InplaceFunction", "once_differentiable"]


class _BackwardClass:
    """``Function._backward_cls``: the BackwardNode subclass of each Function, made the first
    time the Function is applied and then stored on it, so the ~130 built-in Functions a program
    never calls cost no class objects in ``import autogradcli``."""

    def __get__(self, instance: Any, owner: type) -> type[BackwardNode]:
        name = owner.__dict__.get("_backward_name", f"{owner.__name__}Backward")
        node_cls = type(
            name, (BackwardNode,), {"_forward_cls": owner, "__module__": owner.__module__}
        )
        owner._backward_cls = node_cls  # type: ignore[attr-defined]
        return node_cls


_BACKWARD_CLS = _BackwardClass()


class Function(FunctionCtx):
    """Base class for custom differentiable operations, as ``torch.autograd.Function``.

    Subclasses define static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` and are
    called through ``MyFunction.apply(...)``. The older style, instance methods
    ``forward(self, ...)``/``backward(self, ...)`` called as ``MyFunction()(...)``, works too.
    """

    _backward_cls: type[BackwardNode]
    _legacy = False
    _signature: inspect.Signature | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._backward_cls = _BACKWARD_CLS  # its own BackwardNode subclass, made on first use
        forward = inspect.getattr_static(cls, "forward", None)
        cls._legacy = forward is not None and not isinstance(forward, (staticmethod, classmethod))
        cls._signature = None
        cls._separate_setup = (
            inspect.getattr_static(cls, "setup_context") is not Function.__dict__["setup_context"]
        )
        if cls._separate_setup:
            # PyTorch 2's style: forward(*args) without ctx, then setup_context(ctx, inputs, output)
            user_forward, setup = cls.forward, cls.setup_context

            def forward_with_ctx(ctx: Any, *args: Any) -> Any:
                output = user_forward(*args)
                setup(ctx, args, output)
                return output

            cls._forward_impl = staticmethod(forward_with_ctx)
        else:
            cls._forward_impl = staticmethod(cls.forward) if forward is not None else None

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        """Override to use forward(*args) without ctx and save state here instead (PyTorch 2)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the op on ``args``, recorded in the graph when an input requires grad."""
        if cls._legacy:
            raise RuntimeError(
                f"{cls.__name__} defines forward(self, ...) as an instance method (the older "
                f"style): call it as {cls.__name__}()(...), or make forward and backward "
                "@staticmethods taking ctx to use .apply"
            )
        if kwargs:
            args = cls._bind(args, kwargs)
        return run_function(cls._backward_cls(), cls._forward_impl, args)

    @classmethod
    def _bind(cls, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Keyword arguments become positional so backward returns one gradient per argument."""
        if cls._signature is None:
            cls._signature = inspect.signature(cls.forward)
        bound = (
            cls._signature.bind(*args, **kwargs)
            if cls._separate_setup
            else cls._signature.bind(None, *args, **kwargs)
        )
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(f"{cls.__name__}.apply: keyword-only arguments are not supported")
        return bound.args if cls._separate_setup else bound.args[1:]

    # The older, instance style: the Function object is its own ctx and graph node.
    def __call__(self, *args: Any) -> Any:
        if not type(self)._legacy:
            # PyTorch 0.x style on a static-method Function: run it as apply, with the warning
            # PyTorch gives on instantiation (PyTorch 2 then refuses the call; we run it)
            warnings.warn(
                f"{type(self)} should not be instantiated. Methods on autograd functions are all "
                "static, so you should invoke them on the class itself. Instantiating an autograd "
                "function will raise an error in a future version of PyTorch.",
                DeprecationWarning,
                stacklevel=2,
            )
            return type(self).apply(*args)
        if self._saved is not None or self._freed or self._next or self._to_save is not None:
            # an older-style object called again (gradcheck calls it many times): each call
            # records on a fresh node carrying the object's own attributes
            return _fresh_legacy(self)(*args)
        # forward(self, ...) is an instance method: the object is the ctx run_function passes
        return run_function(self, type(self).forward, args)

    def _call_backward(self, grads: list[Tensor | None]) -> Any:
        return self.backward(*grads)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


_CTX_STATE = frozenset(
    name for name, value in vars(FunctionCtx).items() if not callable(value) and name[:2] != "__"
) | {"needs_input_grad", "_to_save"}


def _fresh_legacy(used: Function) -> Function:
    """A new instance of an older-style Function with ``used``'s user attributes, no graph state."""
    fresh = object.__new__(type(used))
    for name, value in vars(used).items():
        if name not in _CTX_STATE:
            setattr(fresh, name, value)
    return fresh


class InplaceFunction(Function):
    """Kept for old code that subclasses it; behaves as Function."""


def once_differentiable(backward: Callable) -> Callable:
    """Mark a backward as not differentiable: it runs without recording; grad-of-grad then errors."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            outputs = backward(ctx, *grads)
        if not STATE.enabled or not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return outputs
        single = not isinstance(outputs, tuple)
        wrapped = tuple(
            # as torch: a detached alias that requires grad, so the error node is recorded
            _DelayedError.apply(o.detach().requires_grad_(), ctx.name())
            if isinstance(o, Tensor) and o._data.dtype.kind in "fcV"
            else o
            for o in ((outputs,) if single else outputs)
        )
        return wrapped[0] if single else wrapped

    return wrapper


class _DelayedError(Function):
    """Passes a tensor through; differentiating through it raises the once_differentiable error."""

    _backward_name = "DelayedError"

    @staticmethod
    def forward(ctx: Any, t: Tensor, name: str) -> Tensor:
        ctx.fn_name = name
        return wrap(t._data)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Any:
        raise RuntimeError(
            f"trying to differentiate twice a function that was marked with @once_differentiable "
            f"({ctx.fn_name})"
        )
