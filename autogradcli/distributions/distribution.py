"""``Distribution``: the base of ``autogradcli.distributions``, PyTorch's interface (batch and event
shapes, ``sample``/``rsample``, ``log_prob``, ``entropy``, argument validation)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor.tensor import Size, Tensor


class Distribution:
    """A batch of probability distributions of one family; subclasses set the parameters."""

    has_rsample = False
    _validate_default = __debug__  # PyTorch validates arguments unless Python runs with -O

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError
        Distribution._validate_default = value

    def __init__(
        self,
        batch_shape: Any = (),
        event_shape: Any = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        else:
            self._validate_args = Distribution._validate_default
        if self._validate_args:
            for name, (check, constraint) in self._arg_checks().items():
                value = getattr(self, name)
                if not bool(check(value).all()):
                    raise ValueError(
                        f"Expected parameter {name} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint}, but found invalid values:\n{value}"
                    )

    def _arg_checks(self) -> dict[str, tuple[Any, str]]:
        """Parameter name -> (elementwise check, constraint name) for the given parameters."""
        return {}

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> Size:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A sample (no gradient) of shape ``sample_shape + batch_shape + event_shape``."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _validate_sample(self, value: Tensor, support: str, inside: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        if not bool(inside(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support}) of the distribution {self!r}, but found "
                f"invalid values:\n{value}"
            )

    def _param_names(self) -> list[str]:
        return []

    def __repr__(self) -> str:
        params = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in self._param_names()
            if p in self.__dict__
        )
        return f"{type(self).__name__}({params})"


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept inside [eps, 1 - eps] of their dtype, so their logs stay finite."""
    eps = float(np.finfo(probs._data.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def float_min(t: Tensor) -> float:
    """The most negative finite value of ``t``'s dtype."""
    return float(np.finfo(t._data.dtype).min)
