"""``Categorical``: a distribution over ``0 .. K-1`` given by probabilities or logits (last dim)."""

from __future__ import annotations

import math
from typing import Any

from ..ops.sampling import multinomial
from ..tensor.factory import full
from ..tensor.tensor import Size, Tensor
from .distribution import Distribution, clamp_probs, float_min


class Categorical(Distribution):
    """Class ``k`` with probability ``probs[..., k]`` (normalised to sum 1) or
    ``softmax(logits)[..., k]``; the leading dims are the batch."""

    def __init__(
        self, probs: Tensor | None = None, logits: Tensor | None = None, validate_args: Any = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch = self._param.shape[:-1] if self._param.dim() > 1 else Size(())
        super().__init__(batch, validate_args=validate_args)

    def _param_names(self) -> list[str]:
        return ["probs", "logits"]

    def _arg_checks(self) -> dict[str, tuple[Any, str]]:
        if "probs" in self.__dict__ and "logits" not in self.__dict__:
            ok = lambda p: (p >= 0) & ((p.sum(-1, keepdim=True) - 1).abs() < 1e-6)  # noqa: E731
            return {"probs": (ok, "Simplex()")}
        return {"logits": (lambda x: x == x, "IndependentConstraint(Real(), 1)")}

    def __getattr__(self, name: str) -> Any:
        # probs and logits are derived from each other on first use, as PyTorch's lazy_property
        if name == "probs":
            value = self.__dict__["logits"].softmax(-1)
        elif name == "logits":
            value = clamp_probs(self.__dict__["probs"]).log()
        else:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        self.__dict__[name] = value
        return value

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def support(self) -> str:
        return f"IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})"

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Class indices (int64) of shape ``sample_shape + batch_shape``."""
        shape = Size(sample_shape)
        n = shape.numel()
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, n, True).t()
        return samples_2d.reshape(self._extended_shape(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        """log P(value), broadcast against the batch shape."""
        if self._validate_args:
            top = self._num_events - 1
            self._validate_sample(
                value,
                self.support,
                lambda v: (v == v.long()) & (v >= 0) & (v <= top),
            )
        value = value.long().unsqueeze(-1)
        logits = self.logits
        shape = _broadcast(tuple(value.shape[:-1]), tuple(logits.shape[:-1]))
        value = value.expand(*shape, 1)
        log_pmf = logits.expand(*shape, self._num_events)
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        """-sum p log p over the classes (0 log 0 counted as 0)."""
        logits = self.logits.clamp(min=float_min(self.logits))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..tensor.factory import arange

        values = arange(self._num_events, dtype=None).reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand(-1, *self._batch_shape)
        return values


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    import numpy as np

    return tuple(np.broadcast_shapes(a, b))
