"""``autogradcli.special``: PyTorch's ``torch.special`` names over the ops (``expm1``, ``expit``,
``logit``, ``xlogy``, ``erf``/``erfc``/``erfinv``, ``gammaln``, ``digamma``/``psi``...)."""

from __future__ import annotations

from ..ops.activation import erf, log_softmax, softmax
from ..ops.binary_math import exp2, logit, sinc, xlogy
from ..ops.logexp import expm1, log1p
from ..ops.rounding import round
from ..ops.special import digamma, erfc, erfinv, polygamma
from ..ops.special import lgamma as gammaln
from ..ops.statistics import logsumexp
from ..ops.unary import sigmoid as expit

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
    "sinc",
    "softmax",
    "xlogy",
]

psi = digamma
