"""``FunctionLayer``: a custom autograd ``Function`` used as a layer.

``FunctionLayer(fn, params={"weight": (10, 64), "bias": (10,)}, args=(0.5,))`` owns one Parameter
per entry of ``params`` (in order) and computes ``fn.apply(x, *params, *args)``; with several
inputs (a named block with ``inputs:``) they all come first. This is how a config turns the
"Extending PyTorch" ``LinearFunction`` into a Linear layer without Python.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..tensor.factory import empty
from . import init as nn_init
from .module import Module
from .parameter import Parameter

__all__ = ["FunctionLayer", "init_tensor"]


def init_tensor(tensor: Any, spec: Any, fan_in: int | None = None) -> None:
    """Fill ``tensor`` in place from an init ``spec``.

    ``spec`` is a number (constant), the name of an ``nn.init`` function with or without its
    trailing ``_`` (``kaiming_uniform``, ``zeros_``, ...), a mapping ``{type: name, **kwargs}``,
    or None for the default: Kaiming-uniform (``a=sqrt(5)``, as ``nn.Linear``) for 2-D and larger
    tensors, else uniform in ``(-1/sqrt(fan_in), 1/sqrt(fan_in))``.
    """
    if spec is None:
        if tensor.dim() >= 2:
            nn_init.kaiming_uniform_(tensor, a=math.sqrt(5))
        else:
            bound = 1.0 / math.sqrt(fan_in) if fan_in else 1.0
            nn_init.uniform_(tensor, -bound, bound)
        return
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        nn_init.constant_(tensor, float(spec))
        return
    kwargs: dict[str, Any] = {}
    if isinstance(spec, Mapping):
        kwargs = {k: v for k, v in spec.items() if k != "type"}
        spec = spec.get("type")
    fn = init_function(spec)
    fn(tensor, **kwargs)


def init_function(name: Any) -> Any:
    """The ``nn.init`` function called ``name`` (``normal`` or ``normal_``); KeyError if none."""
    if not isinstance(name, str):
        raise KeyError(name)
    key = name if name.endswith("_") else name + "_"
    fn = getattr(nn_init, key, None)
    if key.startswith("_") or not callable(fn):
        raise KeyError(name)
    return fn


def init_names() -> list[str]:
    return sorted(
        n[:-1]
        for n in dir(nn_init)
        if n.endswith("_") and not n.startswith("_") and callable(getattr(nn_init, n))
    )


class FunctionLayer(Module):
    """``fn.apply(*inputs, *params, *args)`` with ``params`` learnable tensors of given shapes."""

    def __init__(
        self,
        fn: Any,
        params: Mapping[str, Sequence[int] | int] | None = None,
        init: Mapping[str, Any] | None = None,
        args: Sequence[Any] = (),
    ) -> None:
        super().__init__()
        self.fn = fn
        self.args = tuple(args)
        self.param_names: list[str] = []
        init = dict(init or {})
        shapes = {k: (v,) if isinstance(v, int) else tuple(v) for k, v in (params or {}).items()}
        fan_in = None
        for shape in shapes.values():
            if len(shape) >= 2:
                fan_in = math.prod(shape[1:])
                break
        for name, shape in shapes.items():
            p = Parameter(empty(*shape) if shape else empty(()))
            init_tensor(p.data, init.get(name), fan_in or (shape[-1] if shape else None))
            self.register_parameter(name, p)
            self.param_names.append(name)

    def forward(self, *inputs: Any) -> Any:
        params = [getattr(self, n) for n in self.param_names]
        return self.fn.apply(*inputs, *params, *self.args)

    def extra_repr(self) -> str:
        parts = [getattr(self.fn, "__name__", repr(self.fn))]
        parts += [f"{n}={tuple(getattr(self, n).shape)}" for n in self.param_names]
        if self.args:
            parts.append(f"args={self.args!r}")
        return ", ".join(parts)
