"""``torch.fx.passes.shape_prop``: run a GraphModule on example inputs and note each node's
tensor shape, dtype and strides in ``node.meta["tensor_meta"]``."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...tensor.tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor value (``memory_format`` is None: autogradcli has
    only contiguous and strided views, no channels-last format)."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _metadata(t: Tensor) -> TensorMetadata:
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, tuple(t.stride()), None, False, {})


class ShapeProp(Interpreter):
    """``ShapeProp(gm).propagate(*example_inputs)``: every node's value's TensorMetadata (a
    structure of them for tuples/lists) in ``node.meta["tensor_meta"]``, its type in
    ``node.meta["type"]``."""

    def run_node(self, n: Node) -> Any:
        """Run the node and note the metadata of its value."""
        result = super().run_node(n)
        found = []

        def extract(obj: Any) -> Any:
            if isinstance(obj, Tensor):
                found.append(obj)
                return _metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on ``args``, recording metadata; its output."""
        return self.run(*args)
