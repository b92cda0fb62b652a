"""``Linear`` and ``Identity``."""

from __future__ import annotations

import math
from typing import Any

from ..tensor.factory import empty
from ..tensor.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Identity", "Linear"]


def _init_bias(bias: Tensor | None, weight: Tensor) -> None:
    """PyTorch's default bias of Linear and Conv: uniform in ±1/sqrt(fan_in of ``weight``)."""
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with PyTorch's default initialisation.

    ``weight`` (out_features, in_features) is kaiming-uniform with ``a=sqrt(5)``, i.e.
    U(-1/sqrt(in_features), 1/sqrt(in_features)); ``bias`` is uniform on the same bound.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _init_bias(self.bias, self.weight)

    def forward(self, input: Tensor) -> Tensor:
        params = self._parameters
        if type(self) is Linear and "weight" in params and "bias" in params:
            # read directly: the failed ordinary lookup before Module.__getattr__ costs more
            # than the rest of the layer's bookkeeping
            return F.linear(input, params["weight"], params["bias"])
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )
