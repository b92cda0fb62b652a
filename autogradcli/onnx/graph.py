"""The ONNX graph being built: nodes, initializers, and the values converters pass around.

A value is its name (``Value``, a ``str``) carrying the traced tensor's shape, numpy dtype and
which of its dims follow a dynamic axis, so converters can read shapes without shape inference.
``GraphContext.op`` is PyTorch's ``g.op`` (the ``symbolic`` API): ``g.op("Add", a, b)``, with
attribute names suffixed by their kind (``axis_i``, ``alpha_f``, ``value_t``) or plain.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

from ..backend.registry import to_numpy

__all__ = ["GraphContext", "Value"]

_SUFFIX = re.compile(r"_(i|f|s|t|is|fs|ss|ts)$")


class Value(str):
    """A graph value's name, with the traced tensor's ``shape``, ``dtype`` and ``dynamic`` dims."""

    shape: tuple[int, ...] = ()
    dtype: Any = None
    dynamic: frozenset[int] = frozenset()

    @classmethod
    def of(cls, name: str, shape: Any, dtype: Any, dynamic: Any = ()) -> Value:
        """A value named ``name`` with this metadata."""
        v = cls(name)
        v.shape, v.dtype, v.dynamic = tuple(shape), np.dtype(dtype), frozenset(dynamic)
        return v

    def type(self) -> Any:
        """PyTorch's ``Value.type()``: here the value itself (``.sizes()``/``.dtype`` on it)."""
        return self

    def sizes(self) -> list[int]:
        """The traced shape, as ``Value.type().sizes()`` gives in PyTorch."""
        return list(self.shape)

    def dim(self) -> int:
        return len(self.shape)


class GraphContext:
    """Collects nodes and initializers; ``op`` adds a node and returns its output name(s)."""

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.init_names: set[str] = set()
        self._ids = itertools.count()
        self.node_name = "node"
        # (graph input, axis, size in the first trace, in the second) of each dynamic axis
        self.dynamic_inputs: list[tuple[Any, int, int, int]] = []

    def unique(self, base: str) -> str:
        return f"{base}_{next(self._ids)}"

    def op(self, op_type: str, *inputs: Any, outputs: int = 1, **attrs: Any) -> Any:
        """Add node ``op_type`` on ``inputs`` (None: an omitted optional input); one output name,
        or a tuple of ``outputs`` names."""
        from onnx import helper

        domain = ""
        if "::" in op_type:
            domain, op_type = op_type.split("::", 1)
            domain = "" if domain == "onnx" else domain
        names = [self.unique(f"{self.node_name}/{op_type}") for _ in range(outputs)]
        attributes = {}
        for key, value in attrs.items():
            if value is None:
                continue
            key = _SUFFIX.sub("", key)
            if hasattr(value, "_data"):  # a Tensor (``value_t=``)
                value = to_numpy(value._data)
            if isinstance(value, np.ndarray):
                from onnx import numpy_helper

                value = numpy_helper.from_array(value)
            attributes[key] = value
        ins = ["" if i is None else str(i) for i in inputs]
        node = helper.make_node(
            op_type, ins, names, name=self.unique(f"{self.node_name}/{op_type}"), **attributes
        )
        if domain:
            node.domain = domain
        self.nodes.append(node)
        return names[0] if outputs == 1 else tuple(names)

    def initializer(self, name: str, array: Any) -> str:
        """Add ``array`` as an initializer called ``name`` (once)."""
        from onnx import numpy_helper

        if name not in self.init_names:
            self.init_names.add(name)
            self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, value: Any, dtype: Any = np.int64) -> str:
        """A constant initializer holding ``value`` (a scalar, list or array) as ``dtype``."""
        return self.initializer(self.unique("const"), np.asarray(value, dtype=dtype))

    def ints(self, values: Any) -> str:
        """A 1-D int64 constant (axes, shapes, starts)."""
        return self.const(list(values), np.int64)

    def cast(self, x: Any, dtype: Any) -> Any:
        """``x`` (a value or a Python number) as ``dtype``: a Cast only when it differs."""
        from onnx import helper

        dtype = np.dtype(dtype)
        if not isinstance(x, str):
            return self.const(x, dtype)
        if isinstance(x, Value) and x.dtype == dtype:
            return x
        return self.op("Cast", x, to=helper.np_dtype_to_tensor_dtype(dtype))

    def reduce(self, op_type: str, x: Any, axes: Any, keepdims: bool) -> Any:
        """``op_type`` (ReduceMean, ReduceMax...) over ``axes`` (None: all), as the opset wants."""
        keep = int(keepdims)
        if axes is None:
            return self.op(op_type, x, keepdims=keep)
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, x, self.ints(axes), keepdims=keep)
        return self.op(op_type, x, axes=list(axes), keepdims=keep)

    def squeeze(self, x: Any, axes: Any) -> Any:
        return self.op("Squeeze", x, self.ints(axes))

    def unsqueeze(self, x: Any, axes: Any) -> Any:
        return self.op("Unsqueeze", x, self.ints(axes))

    def dim_sizes(self, first: Any, second: Any) -> Any:
        """A 1-D int64 value of sizes ``first`` (the first trace's), where those that differ
        from ``second`` are taken from the graph inputs' dynamic axes."""
        pieces: list[Any] = []
        static: list[int] = []
        for a, b in zip(first, second):
            if a == b:
                static.append(int(a))
                continue
            if static:
                pieces.append(self.ints(static))
                static = []
            pieces.append(self._dim_size(int(a), int(b)))
        if static:
            pieces.append(self.ints(static))
        return pieces[0] if len(pieces) == 1 else self.op("Concat", *pieces, axis=0)

    def _dim_size(self, a: int, b: int) -> Any:
        """A size that is ``k`` times a dynamic input axis (``a`` and ``b`` in the two traces)."""
        from .errors import OnnxExporterError

        for value, axis, n1, n2 in self.dynamic_inputs:
            if a % n1 == 0 and a * n2 == b * n1:
                size = self.op("Gather", self.op("Shape", value), self.ints([axis]), axis=0)
                return size if a == n1 else self.op("Mul", size, self.ints([a // n1]))
        raise OnnxExporterError(
            f"a size ({a}) follows the dynamic axes but is no multiple of one of them: "
            "export without dynamic_axes"
        )
