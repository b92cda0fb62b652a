"""Recording an op: run forward with recording off, wrap its results as Tensors and, when an input
requires grad, make the ctx their ``grad_fn``, with edges to the inputs' nodes and the saved
tensors with their versions.

``Function.apply`` (function.py) and ``fixed_apply`` (fast_apply.py) inline the common case and
come here for the rest: ``_tracked``/``_untracked`` finish one result, ``_apply_outputs`` any
(tuples, inputs returned as is, dirty or non-differentiable outputs). ``_apply`` is the whole
path in one function, for older-style Function instances.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend import array_module
from ..tensor.tensor import Tensor, _make
from .grad_mode import STATE
from .node import (
    _PACKAGE_DIR,
    FunctionCtx,
    _call_site,
    _internal_files,
    _new,
    _SavedOutput,
    _seq,
    edge_to,
)

_ndarray = np.ndarray
_asarray = np.asarray
_getframe = sys._getframe
# numpy's scalar types (what 0-d array arithmetic returns): wrapped back into 0-d arrays
_NP_SCALARS = frozenset(
    t for t in np.sctypeDict.values() if isinstance(t, type) and issubclass(t, np.generic)
)
# needs_input_grad when nothing is recorded, by argument count (no tuple built per call)
_NO_GRAD_NEEDS = [(False,) * n for n in range(16)]


def _as_output(o: Any, inputs: tuple[Any, ...], dirty: tuple[Tensor, ...]) -> Any:
    """Turn one forward result into the Tensor the caller gets."""
    if type(o) is _ndarray:
        return _make(o)
    if isinstance(o, Tensor):
        if any(o is d for d in dirty):
            return o
        if o._grad_fn is None and not o._requires_grad and not any(o is a for a in inputs):
            return o
        alias = _make(o._data)  # an input (or a tracked tensor) returned as is: a view of it
        alias._vc = o._shared_version_counter()
        alias._base = o
        return alias
    if isinstance(o, np.generic):
        return _make(np.asarray(o))
    if o is None or isinstance(o, (int, float, bool, str, tuple, list, dict)):
        return o
    return _make(o)  # another backend's array (cupy)


def _edges(args: tuple[Any, ...], needs: tuple[bool, ...]) -> tuple[Any, ...]:
    """A node's edges to ``args``: ``edge_to`` for those that need grad, None for the others."""
    return tuple(
        [
            (a._grad_fn, a._output_nr, a._data.shape, a._data.dtype)
            if n and a._grad_fn is not None
            else (edge_to(a) if n else None)
            for a, n in zip(args, needs)
        ]
    )


def _apply(ctx: FunctionCtx, forward: Callable, args: tuple[Any, ...], pass_ctx: bool) -> Any:
    """Run ``forward`` and, when any input requires grad, record ``ctx`` as the outputs' grad_fn."""
    state = STATE
    grad_on = state.enabled
    n_args = len(args)
    if grad_on:
        needs = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
        track = True in needs
        state.enabled = False
    else:
        needs = _NO_GRAD_NEEDS[n_args] if n_args < 16 else (False,) * n_args
        track = False
    ctx.needs_input_grad = needs
    try:
        raw = forward(ctx, *args) if pass_ctx else forward(*args)
    finally:
        state.enabled = grad_on

    return _apply_outputs(ctx, raw, args, track)


def _apply_outputs(
    ctx: FunctionCtx,
    raw: Any,
    args: tuple[Any, ...],
    track: bool,
    edges: tuple[Any, ...] | None = None,
) -> Any:
    """Wrap forward's results as Tensors and, when ``track``, make ``ctx`` their grad_fn."""
    needs = ctx.needs_input_grad
    if type(raw) is _ndarray and not ctx._dirty:  # the common case: one fresh array
        out = _make(raw)
        if not track:
            return out
        ctx._key = -next(_seq)
        ctx._next = _edges(args, needs)
        if raw.dtype.kind == "f" and not ctx._non_differentiable:
            out._grad_fn = ctx
            out._requires_grad = True
        if ctx._to_save is not None:
            _record_saved(ctx, ctx._to_save, (out,))
        return out

    dirty = ctx._dirty
    if type(raw) is tuple:
        outputs = tuple([_as_output(o, args, dirty) for o in raw])
    else:
        outputs = (_as_output(raw, args, dirty),)
    for t in dirty:
        _check_dirty(ctx, t, track)
        t._bump_version()

    if track:
        ctx._key = -next(_seq)
        ctx._next = _edges(args, needs) if edges is None else edges
        non_diff = ctx._non_differentiable
        for i, o in enumerate(outputs):
            if isinstance(o, Tensor) and o._data.dtype.kind == "f":
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
        to_save = ctx._to_save
        if to_save is not None:
            _record_saved(ctx, to_save, outputs)
    return outputs if type(raw) is tuple else outputs[0]


def _record_saved(
    ctx: FunctionCtx, to_save: tuple[Any, ...], outputs: tuple[Any, ...], depth: int = 3
) -> None:
    """Keep what save_for_backward was given, with versions, and where the op was called."""
    saved = None
    versions = []
    for j, t in enumerate(to_save):
        if t is None:
            versions.append(0)
            continue
        vc = t._vc
        versions.append(0 if vc is None else vc[0])
        for i, o in enumerate(outputs):
            if o is t:  # an output of this node: kept without its grad_fn (no cycle)
                if saved is None:
                    saved = list(to_save)
                saved[j] = _SavedOutput(t, i)
                break
    ctx._saved = to_save if saved is None else tuple(saved)
    ctx._saved_versions = tuple(versions)
    ctx._to_save = None
    ctx._site = _call_site(depth)


def _check_dirty(ctx: FunctionCtx, t: Tensor, track: bool) -> None:
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


def _untracked(ctx: FunctionCtx, raw: Any, args: tuple[Any, ...]) -> Any:
    """apply's result when nothing is recorded: one fresh array (or numpy scalar) wrapped as is."""
    tr = type(raw)
    if (tr is _ndarray or tr in _NP_SCALARS) and not ctx._dirty:
        out = _new(Tensor)
        out._data = raw if tr is _ndarray else _asarray(raw)
        out._requires_grad = False
        out._grad = out._grad_fn = out._base = out._hooks = out._acc = out._vc = None
        out._output_nr = 0
        return out
    return _apply_outputs(ctx, raw, args, False)


def _tracked(ctx: FunctionCtx, raw: Any, args: tuple[Any, ...], edges: tuple[Any, ...]) -> Any:
    """apply's recorded tail: ``ctx`` becomes the grad_fn of forward's results, with ``edges``.

    The common case (one fresh array, or a new Tensor that saves itself) is handled here; the
    rest (tuples, inputs returned as is, dirty or non-differentiable outputs) by _apply_outputs.
    """
    tr = type(raw)
    if ctx._dirty:
        return _apply_outputs(ctx, raw, args, True, edges)
    if tr is _ndarray or tr in _NP_SCALARS:
        out = _new(Tensor)
        out._data = raw if tr is _ndarray else _asarray(raw)
        out._grad = out._base = out._hooks = out._acc = out._vc = None
        out._output_nr = 0
    elif tr is Tensor and raw._grad_fn is None and not raw._requires_grad:
        for a in args:
            if a is raw:  # an input returned as is: the general path makes an alias
                return _apply_outputs(ctx, raw, args, True, edges)
        out = raw
    else:
        return _apply_outputs(ctx, raw, args, True, edges)
    ctx._key = -next(_seq)
    ctx._next = edges
    if out._data.dtype.kind == "f" and not ctx._non_differentiable:
        out._grad_fn = ctx
        out._requires_grad = True
    elif tr is not Tensor:
        out._grad_fn = None
        out._requires_grad = False
    to_save = ctx._to_save
    if to_save is not None:
        _record_saved_single(ctx, to_save, out)
    return out


def _record_saved_single(
    ctx: FunctionCtx, to_save: tuple[Any, ...], out: Tensor, depth: int = 3
) -> None:
    """``_record_saved`` for a node with one output ``out``, with ``_call_site`` inlined.

    ``depth``: the frames from here to the caller of the op's entry point (2 from fixed_apply).
    """
    saved = to_save
    versions = []
    for t in to_save:
        if t is None:
            versions.append(0)
            continue
        vc = t._vc
        if t is out:  # the node's own output: kept without its grad_fn (no cycle)
            if vc is None:
                vc = out._vc = [0]
            so = _new(_SavedOutput)
            so.data = out._data
            so.vc = vc
            so.index = 0
            saved = tuple([so if s is out else s for s in to_save])
        versions.append(0 if vc is None else vc[0])
    ctx._saved = saved
    ctx._saved_versions = tuple(versions)
    ctx._to_save = None
    # where the user called the op: the innermost frame outside this package (as _call_site)
    frame = _getframe(depth)
    internal = _internal_files
    while frame is not None:
        filename = frame.f_code.co_filename
        flag = internal.get(filename)
        if flag is None:
            flag = internal[filename] = filename.startswith(_PACKAGE_DIR)
        if not flag:
            ctx._site = (filename, frame.f_lineno)
            return
        frame = frame.f_back
