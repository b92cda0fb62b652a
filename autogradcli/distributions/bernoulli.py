"""``Bernoulli``: 1 with probability ``probs`` (or ``sigmoid(logits)``), else 0."""

from __future__ import annotations

from numbers import Number
from typing import Any

from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops.sampling import bernoulli
from ..tensor.tensor import Size, Tensor
from .distribution import Distribution, clamp_probs
from .normal import broadcast_all


class Bernoulli(Distribution):
    """Independent coin flips; the parameter's shape is the batch shape."""

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        batch = Size(()) if isinstance(given, Number) else param.size()
        super().__init__(batch, validate_args=validate_args)

    def _param_names(self) -> list[str]:
        return ["probs", "logits"]

    def _arg_checks(self) -> dict[str, tuple[Any, str]]:
        if "probs" in self.__dict__ and "logits" not in self.__dict__:
            return {
                "probs": (
                    lambda p: (p >= 0) & (p <= 1),
                    "Interval(lower_bound=0.0, upper_bound=1.0)",
                )
            }
        return {"logits": (lambda x: x == x, "Real()")}

    def __getattr__(self, name: str) -> Any:
        if name == "probs":
            value = self.__dict__["logits"].sigmoid()
        elif name == "logits":
            p = clamp_probs(self.__dict__["probs"])
            value = p.log() - (-p).log1p()
        else:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        self.__dict__[name] = value
        return value

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(*shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value, "Boolean()", lambda v: (v == 0) | (v == 1))
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
