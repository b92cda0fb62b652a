"""``Builder``: the shared core of ``build_experiment``'s parts (data, model, training objects).

It collects every problem as a ``ConfigIssue`` (a build reports them all at once), finds the
class a validated ``type`` names, and words constructor failures and tensor shapes for messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor.tensor import Tensor
from .errors import Path
from .imports import is_import_path
from .issues import IssueCollector
from .loader import Config

__all__ = ["Builder", "shape_text", "tensor_arguments"]


class Builder(IssueCollector):
    """Builds the parts of the run ``config`` describes, noting problems in ``issues``."""

    def __init__(self, config: Config) -> None:
        super().__init__(config.source, config.base_dir)
        self.config = config

    def lookup(self, kind: str, path: Path, table: dict[str, Any]) -> Any:
        """The class a validated ``type`` names: imported, or from the registry ``table``.
        None (reported) only if an imported file changed since validation."""
        return self.resolve(kind, path) if is_import_path(kind) else table[kind]

    def construct(self, path: Path, what: str, make: Callable[[], Any]) -> Any:
        """``make()`` (a constructor call), or None after reporting ``<what> failed: <error>``
        at ``path``."""
        try:
            return make()
        except Exception as err:
            self.error(path, f"{what} failed: {type(err).__name__}: {err}")
            return None


def shape_text(t: Any) -> str:
    """A tensor's shape for messages, ``(8, 64)``; a list of them as ``[(8, 64), (8,)]``."""
    if isinstance(t, Tensor):
        return str(tuple(int(d) for d in t.shape))
    if isinstance(t, (tuple, list)):
        return "[" + ", ".join(shape_text(x) for x in t) + "]"
    return type(t).__name__


def tensor_arguments(kwargs: dict[str, Any]) -> None:
    """Turn the list values of ``weight``/``pos_weight`` (class weights of a loss, written in
    YAML as lists) into tensors, in place."""
    for key in ("weight", "pos_weight"):
        if isinstance(kwargs.get(key), list):
            from ..tensor.factory import tensor

            kwargs[key] = tensor(kwargs[key])
