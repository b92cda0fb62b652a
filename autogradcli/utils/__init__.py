"""PyTorch's ``torch.utils`` namespace: ``utils.data`` (datasets, samplers, DataLoader) and
``utils.hooks``.

A public facade over ``autogradcli.data`` (layer 4), so it sits with the upper layers; the
low-level helpers the core uses live in ``autogradcli._utils``.
"""

from . import data, hooks

__all__ = ["data", "hooks"]
