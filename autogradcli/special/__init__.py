"""``autogradcli.special``: PyTorch's ``torch.special`` names over the ops (``expm1``, ``expit``,
``logit``, ``xlogy``, ``erf``/``erfc``/``erfinv``, ``gammaln``, ``digamma``/``psi``, ``i0``/``i0e``/
``i1``/``i1e``, ``ndtr``/``ndtri``/``log_ndtr``...)."""

from __future__ import annotations

from ..ops.activation import erf, log_softmax, softmax
from ..ops.binary_math import exp2, logit, sinc, xlogy
from ..ops.logexp import expm1, log1p
from ..ops.rounding import round
from ..ops.special import digamma, erfc, erfinv, i0, polygamma
from ..ops.special import lgamma as gammaln
from ..ops.special import special_i0e as i0e
from ..ops.special import special_i1 as i1
from ..ops.special import special_i1e as i1e
from ..ops.special import special_log_ndtr as log_ndtr
from ..ops.special import special_ndtr as ndtr
from ..ops.special import special_ndtri as ndtri
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
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "xlogy",
]

psi = digamma
