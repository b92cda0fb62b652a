"""Recording one forward pass through the engine's own op path (``STATE.trace``, autograd's hook).

While a ``Tracer`` is installed, every ``Function`` applied with recording off (the export runs
under ``no_grad``) calls it instead of running bare. An op with an ONNX form (a converter in the
registry, or a user's ``symbolic``) is run with tracing off and kept as one ``TracedOp``; any other
Function is inlined: its forward runs with tracing on, so the ops it is made of are kept instead,
and it is refused if an output did not come from them (its forward computed on raw arrays).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..autograd.grad_mode import STATE, no_grad
from ..autograd.low_precision import keep_bfloat16
from ..autograd.record import unrecorded_outputs
from ..tensor.tensor import Tensor
from .errors import OnnxExporterError, UnsupportedOperatorError, where_defined
from .registry import has_onnx_form, refusal

__all__ = ["Alias", "TracedOp", "Tracer", "function_class", "is_in_onnx_export"]


@dataclass
class TracedOp:
    """One op of the forward pass: its Function, ctx, arguments and outputs (as forward gave)."""

    cls: type
    ctx: Any
    args: tuple[Any, ...]
    outputs: tuple[Any, ...]


class Alias:
    """The op ``Tracer.alias`` records: its output is its input's value (no node)."""


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is tracing now (``torch.onnx.is_in_onnx_export``)."""
    return STATE.trace is not None


def function_class(ctx: Any) -> type:
    """The Function class behind a ctx (an older-style Function is its own ctx)."""
    return ctx._forward_cls or type(ctx)


class Tracer:
    """Collects the ops of one forward pass; use ``run(fn, *args)``."""

    def __init__(self, inline: bool = True) -> None:
        self.inline = inline  # trace into a user's Function without an ONNX form
        self.ops: list[TracedOp] = []
        self._made: set[int] = set()  # ids of the tensors the kept ops produced
        self._keep: list[Any] = []  # everything whose id is used, kept alive for the trace

    def run(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` under no_grad with this tracer installed."""
        if STATE.trace is not None:
            raise RuntimeError("an ONNX export is already tracing")
        self._keep.extend(args)
        with no_grad():
            STATE.trace = self
            try:
                return fn(*args)
            finally:
                STATE.trace = None

    def __call__(self, ctx: Any, forward: Any, args: tuple[Any, ...]) -> Any:
        cls = function_class(ctx)
        why = refusal(cls)
        if why is not None:
            raise OnnxExporterError(why)
        ctx.needs_input_grad = (False,) * len(args)
        if not has_onnx_form(cls):
            if not self.inline and not cls.__module__.startswith("autogradcli."):
                raise unsupported(cls, "autograd_inlining=False keeps its forward's ops out")
            return self._inline(cls, ctx, forward, args)
        STATE.trace = None
        try:
            out = unrecorded_outputs(ctx, _forward(ctx, forward, args), args)
        finally:
            STATE.trace = self
        outputs = out if type(out) is tuple else (out,)
        self.ops.append(TracedOp(cls, ctx, args, outputs))
        self._keep.append(outputs)
        self._made.update(id(o) for o in outputs if isinstance(o, Tensor))
        return out

    def alias(self, new: Tensor, old: Tensor) -> None:
        """From here on ``new`` holds ``old``'s value (an in-place op's snapshot and result)."""
        self.ops.append(TracedOp(Alias, None, (old,), (new,)))
        self._keep.append((new, old))
        self._made.add(id(new))

    def _inline(self, cls: type, ctx: Any, forward: Any, args: tuple[Any, ...]) -> Any:
        """Run a Function without an ONNX form with tracing on: the ops it calls are kept."""
        out = unrecorded_outputs(ctx, _forward(ctx, forward, args), args)
        inputs = {id(a) for a in args if isinstance(a, Tensor)}
        inputs |= {id(a._data) for a in args if isinstance(a, Tensor)}
        for o in out if type(out) is tuple else (out,):
            if not isinstance(o, Tensor) or id(o) in self._made or id(o) in inputs:
                continue
            base = o._base
            if base is not None and (id(base) in self._made or id(base) in inputs):
                continue  # an input (or an op's output) returned as is: an alias
            if id(o._data) in inputs:
                continue
            raise unsupported(cls)
        return out


def _forward(ctx: Any, forward: Any, args: tuple[Any, ...]) -> Any:
    """forward's raw results, as record.run_function makes them (bfloat16 kept bfloat16)."""
    raw = forward(ctx, *args)
    return keep_bfloat16(ctx, raw, args) if STATE.bfloat16 else raw


def unsupported(
    cls: type,
    why: str = "its forward computes on arrays outside autogradcli's ops, so it cannot be traced",
) -> UnsupportedOperatorError:
    """The error for a Function that has no ONNX form (``why``: for a user's Function)."""
    where = where_defined(cls)
    if cls.__module__.startswith("autogradcli."):
        return UnsupportedOperatorError(
            f"Exporting the operator {cls.__name__} ({where}) to ONNX is not supported: no "
            "converter is registered for it (autogradcli.onnx.register_converter)"
        )
    return UnsupportedOperatorError(
        f"Exporting the autograd.Function {cls.__qualname__} ({where}) to ONNX is not "
        f"supported: {why}. Give it a static method `symbolic(g, *inputs)` returning "
        'g.op("OnnxOp", ...) for its output, as in PyTorch'
    )
