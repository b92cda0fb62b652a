"""Modules a config builds that are not plain ``nn`` layers: merge blocks and the block graph.

``Graph`` is the model of a ``model: {blocks: ..., output: ...}`` config: each block is a child
module named after its key (so ``named_modules`` / hooks / state dicts use the block names) and
reads the outputs of the blocks named by its ``input``/``inputs`` (``input`` is the model input).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import ops
from ..nn.module import Module

__all__ = ["Add", "Concat", "Graph", "Mul"]


class Add(Module):
    """The sum of its inputs (a residual connection: ``inputs: [x, f]``)."""

    def forward(self, *inputs: Any) -> Any:
        out = inputs[0]
        for x in inputs[1:]:
            out = out + x
        return out


class Mul(Module):
    """The elementwise product of its inputs (gating)."""

    def forward(self, *inputs: Any) -> Any:
        out = inputs[0]
        for x in inputs[1:]:
            out = out * x
        return out


class Concat(Module):
    """Its inputs concatenated along ``dim`` (default 1, the feature/channel dim)."""

    def __init__(self, dim: int = 1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, *inputs: Any) -> Any:
        return ops.cat(list(inputs), dim=self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Graph(Module):
    """Named blocks wired by name; ``forward(x)`` returns the ``output`` block's value."""

    def __init__(self, wiring: Sequence[tuple[str, Module, Sequence[str]]], output: str) -> None:
        super().__init__()
        self.wiring = [(name, list(inputs)) for name, _, inputs in wiring]
        for name, module, _ in wiring:
            self.add_module(name, module)
        self.output = output

    def forward(self, x: Any) -> Any:
        values: dict[str, Any] = {"input": x}
        for name, inputs in self.wiring:
            values[name] = getattr(self, name)(*(values[i] for i in inputs))
        return values[self.output]

    def extra_repr(self) -> str:
        return f"output={self.output!r}"

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}("]
        for name, inputs in self.wiring:
            mod = repr(getattr(self, name)).replace("\n", "\n  ")
            lines.append(f"  ({name}) <- {', '.join(inputs)}: {mod}")
        lines.append(f"  output={self.output!r}")
        return "\n".join(lines) + "\n)"
