"""``autogradcli.special``: PyTorch's ``torch.special`` names over the ops (``expm1``, ``expit``,
``logit``, ``xlogy``, ``erf``/``erfc``/``erfinv``, ``gammaln``, ``digamma``/``psi``...)."""

from __future__ import annotations

from typing import Any

from ..ops.activation import erf, log_softmax, softmax
from ..ops.binary_math import exp2
from ..ops.logexp import expm1, log1p
from ..ops.rounding import round
from ..ops.special import digamma, erfc, erfinv, polygamma
from ..ops.special import lgamma as gammaln
from ..ops.statistics import logsumexp
from ..ops.unary import sigmoid as expit
from ..ops.unary import where
from ..tensor.tensor import Tensor

__all__ = [
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammaln",
    "log1p",
    "log_softmax",
    "logit",
    "logsumexp",
    "polygamma",
    "psi",
    "round",
    "softmax",
    "xlogy",
]

psi = digamma


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), with ``p`` clamped to [eps, 1 - eps] when ``eps`` is given."""
    p = input if eps is None else input.clamp(eps, 1.0 - eps)
    return (p / (1.0 - p)).log()


def xlogy(input: Tensor, other: Any) -> Tensor:
    """input * log(other), and 0 where input is 0 (unless other is nan, as in PyTorch)."""
    if not isinstance(other, Tensor):
        other = input.new_full((), other)
    zero = (input == 0) & ~other.isnan()
    return where(zero, 0.0, input * where(zero, 1.0, other).log())
