"""From traced ops to ONNX nodes: each op's tensors become graph values, its converter (or a user
Function's ``symbolic``) adds the nodes.

With dynamic axes the forward is traced twice, the second time with every dynamic axis one
longer; the two traces run the same ops, so comparing them shows which dims and which Python-side
sizes follow the batch. Such a size is rebuilt from the graph input's ``Shape`` (as ``k * batch``),
a constant made in forward whose shape follows the batch becomes an ``Expand`` of its one value,
and anything else that changes with the batch is refused rather than frozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backend.registry import to_numpy
from ..tensor.tensor import Tensor
from .errors import OnnxExporterError
from .graph import GraphContext, Value
from .registry import find_converter
from .trace import TracedOp, unsupported

__all__ = ["Converter", "Node"]


@dataclass
class Node:
    """A traced op as its converter sees it: ``args`` with tensors as ``Value``s, its ``ctx``,
    ``outputs`` (the traced output tensors' metadata) and the graph ``g``."""

    op: TracedOp
    args: tuple[Any, ...]
    outputs: list[Value | None]
    g: GraphContext
    changing: dict[int, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def ctx(self) -> Any:
        return self.op.ctx

    def out(self, i: int = 0) -> Value:
        """The ``i``-th traced output's metadata (shape, dtype)."""
        value = self.outputs[i]
        assert value is not None, f"output {i} of {self.op.cls.__name__} is not a tensor"
        return value

    def size_list(self, index: int, sizes: Any = None) -> Any:
        """Argument ``index`` (a sequence of sizes) as a 1-D int64 graph value: constant, or built
        from the batch where it changed between the traces."""
        if index not in self.changing:
            return self.g.ints(self.args[index] if sizes is None else sizes)
        first, second = self.changing[index]
        return self.g.dim_sizes(first, second)


class Converter:
    """Walks the ops of one (or two aligned) traces, filling ``g`` with nodes."""

    def __init__(self, g: GraphContext, params: dict[int, str]) -> None:
        self.g = g
        self.params = params  # id(parameter or buffer) -> state_dict key
        self.values: dict[int, Value] = {}  # id(tensor) -> value (and id(array) -> value)

    def bind(self, t: Tensor, name: str, t2: Tensor | None) -> Value:
        """Record that tensor ``t`` (``t2`` in the second trace) is the value ``name``."""
        shape = t._data.shape
        dynamic = () if t2 is None else [d for d, s in enumerate(shape) if t2._data.shape[d] != s]
        value = Value.of(name, shape, t._data.dtype, dynamic)
        self.values[id(t)] = value
        self.values[id(t._data)] = value
        return value

    def value(self, t: Tensor, t2: Tensor | None) -> Value:
        """The graph value of tensor ``t``: made by an op, a parameter, or a constant."""
        found = self.values.get(id(t)) or self.values.get(id(t._data))
        if found is not None:
            return found
        key = self.params.get(id(t))
        arr = to_numpy(t._data)
        if key is not None:
            return self.bind(t, self.g.initializer(key, arr), None)
        if t._grad_fn is not None:
            raise OnnxExporterError(
                f"a tensor of shape {tuple(arr.shape)} was computed by {t._grad_fn.name()} with "
                "gradient recording on (enable_grad inside forward), which the export cannot "
                "see: compute it without enable_grad"
            )
        if t2 is None or t2._data.shape == arr.shape:
            if t2 is not None and not np.array_equal(to_numpy(t2._data), arr, equal_nan=True):
                raise OnnxExporterError(
                    f"a tensor of shape {tuple(arr.shape)} reaches the graph without coming from "
                    "an op, and its values change with the inputs: compute it with "
                    "autogradcli ops"
                )
            return self.bind(t, self.g.initializer(self.g.unique("const"), arr), None)
        flat, flat2 = arr.reshape(-1), to_numpy(t2._data).reshape(-1)
        if flat.size == 0 or (flat != flat[0]).any() or (flat2 != flat[0]).any():
            raise OnnxExporterError(
                f"a tensor created in forward has shape {tuple(arr.shape)} that follows the batch "
                "and values that are not one constant: export without dynamic_axes"
            )
        scalar = self.g.const(flat[0], arr.dtype)
        shape = self.g.dim_sizes(arr.shape, t2._data.shape)
        return self.bind(t, self.g.op("Expand", scalar, shape), t2)

    def _args(self, a: Any, b: Any, where: tuple[int, ...], changing: dict[int, Any]) -> Any:
        """``a`` with tensors replaced by values (``b``: the second trace's same argument)."""
        if isinstance(a, Tensor):
            return self.value(a, b if isinstance(b, Tensor) else None)
        if (
            isinstance(a, (tuple, list))
            and isinstance(b, (tuple, list))
            and len(a) == len(b)
            and any(isinstance(x, Tensor) for x in a)
        ):
            return type(a)(self._args(x, y, where, changing) for x, y in zip(a, b))
        if b is not _SAME and _differs(a, b):
            changing[where[0]] = (a, b)
        return a

    def convert(self, op: TracedOp, op2: TracedOp | None) -> None:
        """Add the nodes of one traced op (``op2``: the same op in the second trace)."""
        changing: dict[int, Any] = {}
        args2 = op2.args if op2 is not None else (_SAME,) * len(op.args)
        if op2 is not None and (op2.cls is not op.cls or len(op2.args) != len(op.args)):
            raise _diverged(op)
        args = tuple(
            self._args(a, b, (i,), changing) for i, (a, b) in enumerate(zip(op.args, args2))
        )
        outs2 = op2.outputs if op2 is not None else (None,) * len(op.outputs)
        metas = [
            Value.of("", o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None
            for o in op.outputs
        ]
        self.g.node_name = op.cls.__name__
        node = Node(op, args, metas, self.g, changing)
        symbolic = getattr(op.cls, "symbolic", None)
        if callable(symbolic):
            names = symbolic(self.g, *args)
        else:
            fn = find_converter(op.cls)
            if fn is None:
                raise unsupported(op.cls)
            allowed = getattr(fn, "dynamic_args", ())
            for index in changing:
                if index not in allowed:
                    raise OnnxExporterError(
                        f"{op.cls.__name__}: its argument {index} ({changing[index][0]!r}) "
                        "changes with the dynamic axes, and this op cannot take it from the "
                        "graph: export without dynamic_axes"
                    )
            names = fn(self.g, node)
        names = names if isinstance(names, (tuple, list)) else (names,)
        tensors = [(o, o2) for o, o2 in zip(op.outputs, outs2) if isinstance(o, Tensor)]
        if len(names) < len(tensors):
            raise OnnxExporterError(
                f"the ONNX form of {op.cls.__name__} gave {len(names)} outputs for "
                f"{len(tensors)} tensors"
            )
        for (o, o2), name in zip(tensors, names):
            if name is not None:
                self.bind(o, name, o2 if isinstance(o2, Tensor) else None)


class _Same:
    def __repr__(self) -> str:
        return "<same>"


_SAME = _Same()  # no second trace: every argument is taken as unchanged


def _differs(a: Any, b: Any) -> bool:
    if callable(a):  # a closure made per call (a fused op's composed form)
        return False
    try:
        return bool(a != b)
    except (TypeError, ValueError):  # arrays and objects without a plain ==
        return False


def _diverged(op: TracedOp) -> OnnxExporterError:
    return OnnxExporterError(
        f"the forward pass ran different ops for the two batch sizes traced (at "
        f"{op.cls.__name__}): its control flow depends on the batch; export without dynamic_axes"
    )
