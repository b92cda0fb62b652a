"""``Normal``: the Gaussian N(loc, scale**2), reparameterised so ``rsample`` carries gradients."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..ops.sampling import normal
from ..tensor.dtype import get_default_dtype
from ..tensor.factory import tensor
from ..tensor.tensor import Size, Tensor
from .distribution import Distribution


def broadcast_all(*values: Any) -> list[Tensor]:
    """Numbers become tensors of the others' dtype (or the default); all expand to one shape."""
    ref = next((v for v in values if isinstance(v, Tensor)), None)
    if ref is None and not all(isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or torch.tensor.")
    dtype = ref.dtype if ref is not None else get_default_dtype()
    device = ref.device if ref is not None else None
    ts = [
        v if isinstance(v, Tensor) else tensor(float(v), dtype=dtype, device=device) for v in values
    ]
    shape = tuple(np.broadcast_shapes(*(tuple(t.shape) for t in ts)))
    return [t.expand(*shape) if tuple(t.shape) != shape else t for t in ts]


class Normal(Distribution):
    """N(loc, scale**2) elementwise; ``loc`` and ``scale`` broadcast to the batch shape."""

    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Any = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch = (
            Size(()) if isinstance(loc, Number) and isinstance(scale, Number) else self.loc.size()
        )
        super().__init__(batch, validate_args=validate_args)

    def _param_names(self) -> list[str]:
        return ["loc", "scale"]

    def _arg_checks(self) -> dict[str, tuple[Any, str]]:
        return {
            "loc": (lambda x: x == x, "Real()"),
            "scale": (lambda x: x > 0, "GreaterThan(lower_bound=0.0)"),
        }

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return normal(self.loc.expand(*shape), self.scale.expand(*shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = normal(0.0, 1.0, size=tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value, "Real()", lambda v: v == v)
        var = self.scale**2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value: Tensor) -> Tensor:
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())
