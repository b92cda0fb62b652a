"""Recording an op: run forward with recording off, wrap its results as Tensors and, when an input
requires grad, make the ctx their ``grad_fn``, with edges to the inputs' nodes and the saved
tensors with their versions.

``run_function`` is the whole path for any number of arguments (``Function.apply`` and the older,
instance-style ``Function()(...)``); fixed_arity.py has the one/two-argument entry points of the
built-in ops. Both end in ``recorded_outputs`` (an input needs grad) or ``unrecorded_outputs``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend import array_module
from ..tensor.tensor import Tensor, wrap, wrap_view
from .anomaly_mode import note_forward
from .grad_mode import STATE
from .low_precision import keep_bfloat16
from .node import FunctionCtx, _SavedOutput, _seq, edge_to

_ndarray = np.ndarray
_getframe = sys._getframe
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# code object -> defined inside this package (for _record_saved)
_internal_code: dict[Any, bool] = {}
# numpy's scalar types (what 0-d array arithmetic returns): wrapped back into 0-d arrays
_NP_SCALARS = frozenset(
    t for t in np.sctypeDict.values() if isinstance(t, type) and issubclass(t, np.generic)
)
# needs_input_grad when nothing is recorded, by argument count (no tuple built per call)
_NO_GRAD_NEEDS = [(False,) * n for n in range(16)]
# saved-tensor versions when none of them has been changed in place (the usual case)
_ZEROS = [(0,) * n for n in range(8)]


def run_function(ctx: FunctionCtx, forward: Callable, args: tuple[Any, ...]) -> Any:
    """Run ``forward(ctx, *args)`` and, when an input requires grad, record ``ctx`` as the
    outputs' grad_fn."""
    state = STATE
    if not state.enabled:  # nothing is recorded (e.g. inside a first-order backward)
        if state.special:
            return special_unrecorded(ctx, forward, args)
        n = len(args)
        ctx.needs_input_grad = _NO_GRAD_NEEDS[n] if n < 16 else (False,) * n
        return unrecorded_outputs(ctx, forward(ctx, *args), args)
    track = False
    needs = []
    edges = []  # one loop for both (a comprehension is a function call each)
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            track = True
            needs.append(True)
            edges.append(edge_to(a))
        else:
            needs.append(False)
            edges.append(None)
    ctx.needs_input_grad = tuple(needs)
    state.enabled = False
    try:
        raw = forward(ctx, *args)
    finally:
        state.enabled = True
    if state.special:
        raw = special_result(ctx, raw, args, track)
    if track:
        return recorded_outputs(ctx, raw, args, tuple(edges))
    return unrecorded_outputs(ctx, raw, args)


# Complex results: the first one recorded turns on the complex gradient rules registered here
# (ops/complex_numbers.py: conjugated backward formulas), which real programs never pay for.
_complex_rules: list[Callable[[], None]] = []
# [True] from the first complex result recorded on: a complex gradient needs one, so backward
# formulas test this before looking at a gradient's dtype
COMPLEX_SEEN = [False]


def on_first_complex(enable: Callable[[], None]) -> None:
    """Call ``enable()`` when the first complex result is recorded (now if one has been)."""
    if COMPLEX_SEEN[0]:
        enable()
    else:
        _complex_rules.append(enable)


def rare_float_kind(kind: str) -> bool:
    """Whether a result of dtype kind ``kind`` other than "f" gets a gradient: complex ("c")
    and bfloat16 ("V") do. The common float case is the caller's ``kind == "f"``."""
    if kind == "c":
        if not COMPLEX_SEEN[0]:
            COMPLEX_SEEN[0] = True
            for enable in _complex_rules:
                enable()
            _complex_rules.clear()
        return True
    return kind == "V"


# The rarer modes (STATE.special: anomaly, bfloat16, an export's trace), out of the common path:
# every apply tests the one flag and calls these only when it is set.


def special_result(ctx: FunctionCtx, raw: Any, args: tuple[Any, ...], recorded: bool) -> Any:
    """forward's results ``raw`` under the modes: float32 results of bfloat16 inputs rounded back
    to bfloat16, and a recorded node given the forward's stack (anomaly mode)."""
    state = STATE
    if state.bfloat16:
        raw = keep_bfloat16(ctx, raw, args)
    if recorded and state.anomaly:
        note_forward(ctx)
    return raw


def special_unrecorded(ctx: FunctionCtx, forward: Callable, args: tuple[Any, ...]) -> Any:
    """An op run while recording is off, under the modes: handed to an export's tracer, or run
    with its results kept bfloat16."""
    state = STATE
    if state.trace is not None:  # an export is tracing (onnx/trace.py)
        return state.trace(ctx, forward, args)
    n = len(args)
    ctx.needs_input_grad = _NO_GRAD_NEEDS[n] if n < 16 else (False,) * n
    raw = forward(ctx, *args)
    if state.bfloat16:
        raw = keep_bfloat16(ctx, raw, args)
    return unrecorded_outputs(ctx, raw, args)


def recorded_outputs(ctx: FunctionCtx, raw: Any, args: tuple[Any, ...], edges: tuple) -> Any:
    """forward's results as Tensors with ``ctx`` as their grad_fn; ``ctx`` gets ``edges`` (one
    ``edge_to`` tuple or None per argument) and what forward saved, with versions. (The fixed-arity
    applies do its first two cases in place; keep them in step.)"""
    ctx._key = -next(_seq)
    ctx._next = edges
    if ctx._dirty or ctx._non_differentiable:
        return _outputs(ctx, raw, args, True)
    # the common cases: one fresh array, or a new Tensor forward made (to save it)
    tr = type(raw)
    if tr is _ndarray or tr in _NP_SCALARS:
        k = raw.dtype.kind
        out = wrap(raw, True, ctx) if k == "f" or rare_float_kind(k) else wrap(raw)
    elif tr is Tensor and raw._grad_fn is None and not raw._requires_grad:
        for a in args:
            if a is raw:  # an input returned as is: the general path makes an alias
                return _outputs(ctx, raw, args, True)
        out = raw
        k = out._data.dtype.kind
        if k == "f" or rare_float_kind(k):
            out._grad_fn = ctx
            out._requires_grad = True
    else:
        return _outputs(ctx, raw, args, True)
    if ctx._to_save is not None:
        _record_saved(ctx)
    return out


def unrecorded_outputs(ctx: FunctionCtx, raw: Any, args: tuple[Any, ...]) -> Any:
    """forward's results as Tensors when nothing is recorded."""
    if not ctx._dirty:
        tr = type(raw)
        if tr is _ndarray or tr in _NP_SCALARS:
            return wrap(raw)
        if tr is Tensor and raw._grad_fn is None and not raw._requires_grad:
            for a in args:  # a new Tensor forward made (a view, say), not an input: as it is
                if a is raw:
                    break
            else:
                return raw
    return _outputs(ctx, raw, args, False)


def _as_output(o: Any, inputs: tuple[Any, ...], dirty: tuple[Tensor, ...]) -> Any:
    """Turn one forward result into the Tensor the caller gets."""
    if isinstance(o, Tensor):
        if any(o is d for d in dirty):
            return o
        if o._grad_fn is None and not o._requires_grad and not any(o is a for a in inputs):
            return o
        return wrap_view(o._data, o)  # an input (or a tracked tensor) returned as is: a view
    if isinstance(o, np.generic):  # before the Python types: np.float64 is a float
        return wrap(o)
    if o is None or isinstance(o, (int, float, bool, str, tuple, list, dict)):
        return o
    return wrap(o)  # an array of this backend or another (cupy)


def _outputs(ctx: FunctionCtx, raw: Any, args: tuple[Any, ...], track: bool) -> Any:
    """The general case of the two above: tuples, inputs returned as is, dirty inputs,
    non-differentiable outputs."""
    dirty = ctx._dirty
    single = type(raw) is not tuple
    outputs = tuple([_as_output(o, args, dirty) for o in ((raw,) if single else raw)])
    for t in dirty:
        _check_dirty(ctx, t, track)
        t._bump_version()
    if track:
        non_diff = ctx._non_differentiable
        for i, o in enumerate(outputs):
            if isinstance(o, Tensor) and ((k := o._data.dtype.kind) == "f" or rare_float_kind(k)):
                if non_diff and any(o is nd or o._base is nd for nd in non_diff):
                    continue
                o._grad_fn = ctx
                o._output_nr = i
                o._requires_grad = True
        if len(outputs) > 1:
            ctx._n_outputs = len(outputs)
            ctx._out_meta = tuple(
                [
                    (o._data.shape, o._data.dtype, array_module(o._data))
                    if isinstance(o, Tensor)
                    else None
                    for o in outputs
                ]
            )
        if ctx._to_save is not None:
            _record_saved(ctx)
    return outputs[0] if single else outputs


def _record_saved(ctx: FunctionCtx, depth: int = 3) -> None:
    """Keep what save_for_backward was given, with versions, and where the op was called (the
    search for the caller starts ``depth`` frames up: the frame that called ``apply``)."""
    to_save = ctx._to_save
    n = len(to_save)
    saved = None
    versions = _ZEROS[n] if n < 8 else (0,) * n  # a tensor never changed in place has no counter
    for j, t in enumerate(to_save):
        if t is None:
            continue
        vc = t._vc
        if t._grad_fn is ctx:  # an output of this node: kept without its grad_fn (no cycle)
            if vc is None:
                vc = t._vc = [0]
            if saved is None:
                saved = list(to_save)
            saved[j] = _SavedOutput((t._data, vc, t._output_nr))
        if vc is not None and vc[0]:
            if type(versions) is tuple:
                versions = list(versions)
            versions[j] = vc[0]
    ctx._saved = to_save if saved is None else tuple(saved)
    ctx._saved_versions = versions if type(versions) is tuple else tuple(versions)
    ctx._to_save = None
    # where the user called the op, for the error if a saved tensor is changed in place: the
    # innermost frame outside this package, kept as code object and instruction offset (the
    # line is looked up only for the message)
    frame = _getframe(depth)
    internal = _internal_code
    while frame is not None:
        code = frame.f_code
        flag = internal.get(code)
        if flag is None:
            if len(internal) > 4096:  # code compiled at run time (exec) must not pile up
                internal.clear()
            flag = internal[code] = code.co_filename.startswith(_PACKAGE_DIR)
        if not flag:
            ctx._site = (code, frame.f_lasti)
            return
        frame = frame.f_back


def _check_dirty(ctx: Any, t: Tensor, track: bool) -> None:
    """In-place changes to what the graph still needs are refused as PyTorch refuses them."""
    if not track:
        return
    if t._grad_fn is None and t._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = t._base
    if base is not None and base._requires_grad:
        if base._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation."
            )
        raise RuntimeError(
            f"{ctx.name()}: in-place change of a view of a tensor that requires grad is not "
            "supported (autogradcli does not rewrite the base's history); clone() the view first "
            "or use an out-of-place op"
        )
