"""More reductions, gathered in one place for ``ops/__init__`` and ``ops/methods``: the
extremes (``minmax``), integer/bool results (``discrete_reduction``), var/std/logsumexp/norm
(``statistics``) and prod/cumsum (``scan``). Every name stays importable from here."""

from __future__ import annotations

from typing import Any

from . import discrete_reduction, minmax, scan, statistics

# re-exported so that everything once defined here still imports from here
from .discrete_reduction import _Discrete, all, any, argmax, argmin  # noqa: F401
from .minmax import (  # noqa: F401
    Amax,
    Amin,
    MaxAll,
    MaxDim,
    MaxResult,
    MinAll,
    MinDim,
    MinResult,
    amax,
    amin,
    max,
    min,
)
from .scan import Cumsum, ExclusiveProd, Prod, ProdAll, cumsum, prod  # noqa: F401
from .statistics import Logsumexp, Norm, Std, Var, logsumexp, norm, std, var  # noqa: F401

_METHODS = {
    **minmax.TENSOR_METHODS,
    **discrete_reduction.TENSOR_METHODS,
    **statistics.TENSOR_METHODS,
    **scan.TENSOR_METHODS,
}
_NAMES = "max min amax amin argmax argmin all any var std prod logsumexp norm cumsum"
TENSOR_METHODS: dict[str, Any] = {name: _METHODS[name] for name in _NAMES.split()}
__all__: list[str] = list(TENSOR_METHODS)
