"""The built-in callbacks a config names by ``type``, and the default ones every run gets.

``BUILTIN_CALLBACKS`` is the one table: a config accepts each name, and its settings and their
defaults are the class's own ``__init__`` signature (read by ``config.registry.hook_defaults``).
Adding a built-in callback is one line here.
"""

from __future__ import annotations

from collections.abc import Iterable

from .callbacks import Callback, Checkpoint, EarlyStopping, GradNormLogger, LRLogger
from .guards import NonFiniteGuard
from .tensorboard import TensorBoard

__all__ = ["BUILTIN_CALLBACKS", "DEFAULT_CALLBACKS", "missing_defaults"]

BUILTIN_CALLBACKS: dict[str, type[Callback]] = {
    "EarlyStopping": EarlyStopping,
    "Checkpoint": Checkpoint,
    "LRLogger": LRLogger,
    "GradNormLogger": GradNormLogger,
    "NonFiniteGuard": NonFiniteGuard,
    "TensorBoard": TensorBoard,
}
# added to every run that does not name them (``enabled: false`` turns one off)
DEFAULT_CALLBACKS: tuple[str, ...] = ("Checkpoint", "NonFiniteGuard")


def missing_defaults(present: Iterable[str]) -> list[str]:
    """The default callbacks (names) not among ``present``: the one rule both the trainer
    and the config use to add them."""
    have = set(present)
    return [name for name in DEFAULT_CALLBACKS if name not in have]
