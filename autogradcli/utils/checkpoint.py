"""``torch.utils.checkpoint``: ``checkpoint(fn, *args)`` computes ``fn(*args)`` with the same
values and gradients as PyTorch's; the activations are kept rather than recomputed (no memory is
saved here), which is what ``checkpoint`` means for the result."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["checkpoint", "checkpoint_sequential"]


def _warn_reentrant(use_reentrant: bool | None) -> None:
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            UserWarning,
            stacklevel=3,
        )


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Any = None,
    determinism_check: str = "default",
    debug: bool = False,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, recorded for backward as usual."""
    _warn_reentrant(use_reentrant)
    return function(*args, **kwargs)


def checkpoint_sequential(
    functions: Any,
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """The modules of ``functions`` (a Sequential or a list) applied in order to ``input``."""
    _warn_reentrant(use_reentrant)
    modules: Sequence[Any] = (
        list(functions.children()) if hasattr(functions, "children") else functions
    )
    for module in modules:
        input = module(input)
    return input
