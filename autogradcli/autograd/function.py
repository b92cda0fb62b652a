"""``Function``: PyTorch's custom-op API (static ``forward(ctx, ...)``/``backward(ctx, *grads)``).

Every built-in op is a Function too, so this file is the one way an operation enters the graph.
``Function.apply`` runs ``forward`` with recording off, wraps array results as Tensors, and, when
an input requires grad, makes the ``ctx`` the outputs' ``grad_fn``: a node holding edges to the
inputs' nodes, the saved tensors with their versions, and what backward needs.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend import array_module
from ..tensor.tensor import Tensor, _make
from ..utils.hooks import RemovableHandle, add_hook
from .grad_mode import STATE, no_grad

_seq = itertools.count()
_ndarray = np.ndarray
_asarray = np.asarray
_new = object.__new__
_getframe = sys._getframe
# numpy's scalar types (what 0-d array arithmetic returns): wrapped back into 0-d arrays
_NP_SCALARS = frozenset(
    t for t in np.sctypeDict.values() if isinstance(t, type) and issubclass(t, np.generic)
)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_internal_files: dict[str, bool] = {}

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through "
    "the graph a second time or if you need to access saved tensors after calling backward."
)


def _call_site(depth: int = 3) -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside this package: where the user called the op."""
    frame = sys._getframe(depth)
    internal = _internal_files
    while frame is not None:
        filename = frame.f_code.co_filename
        flag = internal.get(filename)
        if flag is None:
            flag = internal[filename] = filename.startswith(_PACKAGE_DIR)
        if not flag:
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


class _SavedOutput:
    """A saved output of the node itself, kept as data to avoid a node -> tensor -> node cycle."""

    __slots__ = ("data", "index", "vc")

    def __init__(self, t: Tensor, index: int) -> None:
        self.data = t._data
        self.vc = t._shared_version_counter()
        self.index = index


class FunctionCtx:
    """The ``ctx`` passed to forward and backward; after forward it is the outputs' ``grad_fn``."""

    materialize_grads = True
    needs_input_grad: tuple[bool, ...] = ()
    _to_save: tuple[Any, ...] | None = None
    _saved: tuple[Any, ...] | None = None
    _saved_versions: tuple[int, ...] = ()
    _freed = False
    _dirty: tuple[Tensor, ...] = ()
    _non_differentiable: tuple[Tensor, ...] = ()
    _next: tuple[Any, ...] = ()
    _key = 0
    _n_outputs = 1
    _out_meta: tuple[Any, ...] | None = None
    _tensor_hooks: dict[int, dict[int, Callable]] | None = None
    _retained: dict[int, Any] | None = None
    _special = False  # has tensor hooks or retained grads (the engine checks this one flag)
    _site: tuple[str, int] | None = None
    _forward_cls: Any = None  # the Function of a node (None: an older-style Function instance)

    # ----------------------------------------------------------------- the ctx API
    def save_for_backward(self, *tensors: Tensor | None) -> None:
        for t in tensors:
            if t is not None and type(t) is not Tensor and not isinstance(t, Tensor):
                i = next(
                    i for i, t in enumerate(tensors) if t is not None and not isinstance(t, Tensor)
                )
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}"
                )
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        saved = self._saved
        if saved is None:
            if self._freed:
                raise RuntimeError(FREED_MESSAGE)
            return self._to_save or ()
        out = None
        for j, entry in enumerate(saved):
            if entry is None:
                continue
            if type(entry) is _SavedOutput:
                vc = entry.vc
                current = vc[0]
                t = _new(Tensor)  # _make inlined: the output, with this node as its grad_fn
                t._data = entry.data
                t._requires_grad = True
                t._grad = t._base = t._hooks = t._acc = None
                t._vc = vc
                t._grad_fn = self
                t._output_nr = entry.index
                if out is None:
                    out = list(saved)
                out[j] = t
            else:
                t = entry
                vc = t._vc
                current = 0 if vc is None else vc[0]
            version = self._saved_versions[j]
            if current != version:
                raise RuntimeError(self._modified_message(t, version, current))
        return saved if out is None else tuple(out)

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    # ----------------------------------------------------------------- the node API
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        return tuple((None, 0) if e is None else (e[0], e[1]) for e in self._next)

    def _call_backward(self, grads: list[Tensor | None]) -> Any:
        raise NotImplementedError

    def _release(self) -> None:
        if self._saved is not None:
            self._saved = None
            self._freed = True

    def _register_tensor_hook(self, output_nr: int, hook: Callable) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        self._special = True
        return add_hook(self._tensor_hooks.setdefault(output_nr, {}), hook)

    def _retain_grad_of(self, t: Tensor) -> None:
        if self._retained is None:
            self._retained = {}
        self._special = True
        self._retained[t._output_nr] = weakref.ref(t)

    def _retains(self, t: Tensor) -> bool:
        ref = (self._retained or {}).get(t._output_nr)
        return ref is not None and ref() is t

    def _modified_message(self, t: Tensor, saved: int, current: int) -> str:
        where = f" (called at {self._site[0]}:{self._site[1]})" if self._site else ""
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{t.dtype.name} tensor of shape {list(t._data.shape)}], saved "
            f"for backward by {self.name()}{where}, is at version {current}; expected version "
            f"{saved} instead. Hint: clone() the tensor before changing it in place, or change "
            "a copy."
        )


class BackwardNode(FunctionCtx):
    """Base of the per-Function node classes (``MyFuncBackward``) that ``apply`` instantiates."""

    def _call_backward(self, grads: list[Tensor | None]) -> Any:
        return self._forward_cls.backward(self, *grads)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad:
    """The node at a leaf that requires grad: sums incoming gradients into ``leaf.grad``.

    The leaf keeps its accumulator for life (``t._acc``); the accumulator refers back weakly.
    """

    __slots__ = ("__weakref__", "_key", "_ref")
    _next = ()
    _n_outputs = 1
    _tensor_hooks = None
    _retained = None
    _special = False

    def __init__(self, variable: Tensor) -> None:
        self._ref = weakref.ref(variable)
        # accumulators run as soon as they are ready, before other nodes (as in PyTorch)
        self._key = -(1 << 62) - next(_seq)

    @property
    def variable(self) -> Tensor | None:
        return self._ref()

    def name(self) -> str:
        return "AccumulateGrad"

    @property
    def next_functions(self) -> tuple[()]:
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


def edge_to(t: Tensor) -> tuple[Any, int, tuple[int, ...], Any]:
    """The edge from a node to input ``t``: (node, output_nr, shape, dtype)."""
    fn = t._grad_fn
    if fn is None:
        acc = t._acc
        if acc is None:
            acc = t._acc = AccumulateGrad(t)
        return (acc, 0, t._data.shape, t._data.dtype)
    return (fn, t._output_nr, t._data.shape, t._data.dtype)


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
    return tuple(
        [
            (a._grad_fn, a._output_nr, a._data.shape, a._data.dtype)
            if n and a._grad_fn is not None
            else (edge_to(a) if n else None)
            for a, n in zip(args, needs)
        ]
    )


_NO_GRAD_NEEDS = [(False,) * n for n in range(16)]


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
        name = cls.__dict__.get("_backward_name", f"{cls.__name__}Backward")
        cls._backward_cls = type(
            name, (BackwardNode,), {"_forward_cls": cls, "__module__": cls.__module__}
        )
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
        if cls._legacy:
            cls.apply = cls._legacy_apply  # type: ignore[method-assign]

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
        # The hot path of every op: _apply + _apply_outputs inlined for the common cases.
        if kwargs:
            args = cls._bind(args, kwargs)
        ctx = cls._backward_cls()
        state = STATE
        if not state.enabled:
            # nothing is recorded (e.g. inside a first-order backward): the shortest path
            n = len(args)
            ctx.needs_input_grad = _NO_GRAD_NEEDS[n] if n < 16 else (False,) * n
            raw = cls._forward_impl(ctx, *args)
            if type(raw) is _ndarray and not ctx._dirty:
                out = _new(Tensor)
                out._data = raw
                out._requires_grad = False
                out._grad = out._grad_fn = out._base = out._hooks = out._acc = out._vc = None
                out._output_nr = 0
                return out
            return _untracked(ctx, raw, args)

        # one pass over the arguments: which need grad, and the edges to their nodes
        needs = []
        edges = []
        track = False
        for a in args:
            if isinstance(a, Tensor) and a._requires_grad:
                track = True
                needs.append(True)
                d = a._data
                fn = a._grad_fn
                if fn is None:
                    fn = a._acc
                    if fn is None:
                        fn = a._acc = AccumulateGrad(a)
                    edges.append((fn, 0, d.shape, d.dtype))
                else:
                    edges.append((fn, a._output_nr, d.shape, d.dtype))
            else:
                needs.append(False)
                edges.append(None)
        ctx.needs_input_grad = tuple(needs)
        state.enabled = False
        try:
            raw = cls._forward_impl(ctx, *args)
        finally:
            state.enabled = True
        if not track:
            return _untracked(ctx, raw, args)
        return _tracked(ctx, raw, args, tuple(edges))

    @classmethod
    def _legacy_apply(cls, *args: Any, **kwargs: Any) -> Any:
        if cls._legacy:
            raise RuntimeError(
                f"{cls.__name__} defines forward(self, ...) as an instance method (the older "
                f"style): call it as {cls.__name__}()(...), or make forward and backward "
                "@staticmethods taking ctx to use .apply"
            )

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
            raise RuntimeError(
                f"{type(self).__name__} has a static forward: call {type(self).__name__}.apply(...) "
                f"instead of {type(self).__name__}()(...)"
            )
        if self._saved is not None or self._freed or self._next:
            raise RuntimeError(
                f"this {type(self).__name__} instance was already called; an older-style Function "
                "object can be used once: create a new one for each call"
            )
        return _apply(self, self.forward, args, False)

    def _call_backward(self, grads: list[Tensor | None]) -> Any:
        return self.backward(*grads)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


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
    """_record_saved for a node with one output ``out``; _call_site inlined (``depth``: the
    frames from here to the op's entry point's caller)."""
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


_T1 = (True,)
_F1 = (False,)
_TT = (True, True)
_TF = (True, False)
_FT = (False, True)
_FF = (False, False)


def fixed_apply(
    cls: type[Function], arity: int, operands: tuple[type, ...] | None = None
) -> Callable[..., Any]:
    """``cls.apply`` for exactly ``arity`` (1 or 2) positional arguments, as one Python call.

    The same steps as ``Function.apply`` (needs_input_grad, edges, forward with recording off,
    the same recorded tail) without packing ``*args``: the built-in ops' methods and operators.
    With ``operands`` (arity 2), it is an operator method itself: NotImplemented when the second
    argument is not an instance of ``operands``, so Python tries the other operand's method.
    """
    state = STATE

    def apply1(a: Any) -> Any:
        ctx = cls._backward_cls()
        if state.enabled:
            if isinstance(a, Tensor) and a._requires_grad:
                d = a._data
                fn = a._grad_fn
                if fn is None:
                    fn = a._acc
                    if fn is None:
                        fn = a._acc = AccumulateGrad(a)
                    e = (fn, 0, d.shape, d.dtype)
                else:
                    e = (fn, a._output_nr, d.shape, d.dtype)
                ctx.needs_input_grad = _T1
                state.enabled = False
                try:
                    raw = cls._forward_impl(ctx, a)
                finally:
                    state.enabled = True
                if (
                    type(raw) is _ndarray
                    and raw.dtype.kind == "f"
                    and not ctx._dirty
                    and not ctx._non_differentiable
                ):  # _tracked's first case inlined: one fresh float array
                    out = _new(Tensor)
                    out._data = raw
                    out._grad_fn = ctx
                    out._requires_grad = True
                    out._grad = out._base = out._hooks = out._acc = out._vc = None
                    out._output_nr = 0
                    ctx._key = -next(_seq)
                    ctx._next = (e,)
                    if ctx._to_save is not None:
                        _record_saved_single(ctx, ctx._to_save, out, 2)
                    return out
                return _tracked(ctx, raw, (a,), (e,))
            ctx.needs_input_grad = _F1
            state.enabled = False
            try:
                raw = cls._forward_impl(ctx, a)
            finally:
                state.enabled = True
        else:
            ctx.needs_input_grad = _F1
            raw = cls._forward_impl(ctx, a)
        if type(raw) is _ndarray and not ctx._dirty:
            out = _new(Tensor)
            out._data = raw
            out._requires_grad = False
            out._grad = out._grad_fn = out._base = out._hooks = out._acc = out._vc = None
            out._output_nr = 0
            return out
        return _untracked(ctx, raw, (a,))

    def apply2(a: Any, b: Any) -> Any:
        if operands is not None:
            tb = type(b)
            if (
                tb is not float
                and tb is not Tensor
                and tb is not int
                and not isinstance(b, operands)
            ):
                return NotImplemented
        ctx = cls._backward_cls()
        if state.enabled:
            ea = eb = None
            if isinstance(a, Tensor) and a._requires_grad:
                d = a._data
                fn = a._grad_fn
                if fn is None:
                    fn = a._acc
                    if fn is None:
                        fn = a._acc = AccumulateGrad(a)
                    ea = (fn, 0, d.shape, d.dtype)
                else:
                    ea = (fn, a._output_nr, d.shape, d.dtype)
            if isinstance(b, Tensor) and b._requires_grad:
                d = b._data
                fn = b._grad_fn
                if fn is None:
                    fn = b._acc
                    if fn is None:
                        fn = b._acc = AccumulateGrad(b)
                    eb = (fn, 0, d.shape, d.dtype)
                else:
                    eb = (fn, b._output_nr, d.shape, d.dtype)
            if ea is None:
                ctx.needs_input_grad = _FF if eb is None else _FT
            else:
                ctx.needs_input_grad = _TF if eb is None else _TT
            state.enabled = False
            try:
                raw = cls._forward_impl(ctx, a, b)
            finally:
                state.enabled = True
            if ea is not None or eb is not None:
                if (
                    type(raw) is _ndarray
                    and raw.dtype.kind == "f"
                    and not ctx._dirty
                    and not ctx._non_differentiable
                ):  # _tracked's first case inlined: one fresh float array
                    out = _new(Tensor)
                    out._data = raw
                    out._grad_fn = ctx
                    out._requires_grad = True
                    out._grad = out._base = out._hooks = out._acc = out._vc = None
                    out._output_nr = 0
                    ctx._key = -next(_seq)
                    ctx._next = (ea, eb)
                    if ctx._to_save is not None:
                        _record_saved_single(ctx, ctx._to_save, out, 2)
                    return out
                return _tracked(ctx, raw, (a, b), (ea, eb))
        else:
            ctx.needs_input_grad = _FF
            raw = cls._forward_impl(ctx, a, b)
        if type(raw) is _ndarray and not ctx._dirty:
            out = _new(Tensor)
            out._data = raw
            out._requires_grad = False
            out._grad = out._grad_fn = out._base = out._hooks = out._acc = out._vc = None
            out._output_nr = 0
            return out
        return _untracked(ctx, raw, (a, b))

    if arity == 1:
        apply1.__qualname__ = apply1.__name__ = f"{cls.__name__}.apply"
        return apply1
    if arity == 2:
        apply2.__qualname__ = apply2.__name__ = f"{cls.__name__}.apply"
        return apply2
    raise ValueError(f"fixed_apply: arity {arity} (1 or 2 only)")


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
            if isinstance(o, Tensor) and o._data.dtype.kind == "f"
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
        return _make(t._data)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Any:
        raise RuntimeError(
            f"trying to differentiate twice a function that was marked with @once_differentiable "
            f"({ctx.fn_name})"
        )
