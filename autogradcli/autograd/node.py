"""The graph's nodes: the ``ctx`` that forward and backward receive, which after forward is the
outputs' ``grad_fn``, and ``AccumulateGrad``, the node at a leaf that requires grad.

A node holds its edges to its inputs' nodes (``_next``, one ``edge_to`` tuple per input), what
backward needs (saved tensors with their versions at save time), and where the op was called, so
that a saved tensor changed in place since is reported with the user's file:line.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from .._utils.hooks import RemovableHandle, add_hook
from ..tensor.tensor import Tensor, wrap

# creation order of nodes: the engine runs the latest first (a node's ``_key`` is -next(_seq))
_seq = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through "
    "the graph a second time or if you need to access saved tensors after calling backward."
)


class _SavedOutput(tuple):
    """A saved output of the node itself, kept as (data, version counter, output index) rather
    than as the Tensor, to avoid a node -> tensor -> node cycle."""

    __slots__ = ()


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
    _post_hooks: dict[int, Callable] | None = None  # Node.register_hook's, after backward
    _site: tuple[Any, int] | None = None  # (code object, instruction offset) of the user's call
    _forward_cls: Any = None  # the Function of a node (None: an older-style Function instance)

    # ----------------------------------------------------------------- the ctx API
    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep ``tensors`` for backward; apply records their versions when forward returns."""
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
                data, vc, index = entry
                current = vc[0]
                t = wrap(data, True, self)  # the output again, with this node as its grad_fn
                t._vc = vc
                t._output_nr = index
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

    @property
    def saved_variables(self) -> tuple[Tensor | None, ...]:
        """The pre-0.4 name of ``saved_tensors``; warns as PyTorch does."""
        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2
        )
        return self.saved_tensors

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

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after this node's backward; a returned tuple replaces
        ``grad_inputs`` (the gradients the node sends to its ``next_functions``)."""
        if self._post_hooks is None:
            self._post_hooks = {}
        return add_hook(self._post_hooks, fn)

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
        where = ""
        if self._site is not None:
            code, offset = self._site
            where = f" (called at {code.co_filename}:{_line_at(code, offset)})"
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


def _line_at(code: Any, offset: int) -> int | None:
    """The source line of the instruction at byte ``offset`` in ``code`` (a frame's f_lineno)."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return None


def edge_to(t: Tensor) -> tuple[Any, int, tuple[int, ...], Any]:
    """The edge from a node to input ``t``: (node, output_nr, shape, dtype); a leaf's
    AccumulateGrad is made here on first use (fixed_arity.py builds a non-leaf's tuple in place,
    with these fields in this order)."""
    d = t._data
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr, d.shape, d.dtype)
    acc = t._acc
    if acc is None:
        acc = t._acc = AccumulateGrad(t)
    return (acc, 0, d.shape, d.dtype)
