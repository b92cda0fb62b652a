"""numpy's keyword names where PyTorch accepts them: ``axis`` for ``dim`` and ``keepdims`` for
``keepdim`` (``x.sum(axis=0, keepdims=True)``, ``torch.argmax(x, axis=1)``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# the functions (and Tensor methods) whose ``dim`` PyTorch also accepts as ``axis``
AXIS_FUNCTIONS = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "argsort",
    "cat",
    "concat",
    "concatenate",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "diff",
    "gather",
    "index_select",
    "log_softmax",
    "logsumexp",
    "max",
    "mean",
    "median",
    "min",
    "nanmean",
    "nansum",
    "narrow",
    "prod",
    "select",
    "softmax",
    "sort",
    "squeeze",
    "stack",
    "std",
    "std_mean",
    "sum",
    "topk",
    "unbind",
    "unsqueeze",
    "var",
    "var_mean",
]

_ALIASES = (("axis", "dim"), ("keepdims", "keepdim"))


def numpy_keywords(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` also taking ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            for alias, name in _ALIASES:
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(
                            f"{fn.__name__}() got an unexpected keyword argument '{alias}'"
                        )
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    call.__name__, call.__qualname__, call.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    call.__module__, call.__wrapped__ = fn.__module__, fn  # type: ignore[attr-defined]
    return call


def add_numpy_keywords(namespace: dict[str, Any]) -> None:
    """Rebind each of ``AXIS_FUNCTIONS`` present in ``namespace`` to its aliased form."""
    for name in AXIS_FUNCTIONS:
        fn = namespace.get(name)
        if callable(fn) and not hasattr(fn, "__wrapped__"):
            namespace[name] = numpy_keywords(fn)
