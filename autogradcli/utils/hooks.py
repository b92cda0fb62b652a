"""``torch.utils.hooks``: the handle every ``register_*hook`` call returns."""

from .._utils.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
