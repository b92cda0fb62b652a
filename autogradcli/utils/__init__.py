"""PyTorch's ``torch.utils`` namespace: ``utils.data`` (datasets, samplers, DataLoader),
``utils.hooks``, and on first use ``checkpoint``, ``tensorboard`` and ``_pytree``.

A public facade over ``autogradcli.data`` (layer 4), so it sits with the upper layers; the
low-level helpers the core uses live in ``autogradcli._utils``.
"""

from .._utils.lazy import lazy_attributes
from . import data, hooks

_LAZY = {"_pytree": "._pytree", "checkpoint": ".checkpoint", "tensorboard": ".tensorboard"}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = ["data", "hooks"]
