"""Saving and loading of tensors and nested containers without pickle (see ``archive``)."""

from .archive import FORMAT_NAME, FORMAT_VERSION, load, save
from .format import SerializationError
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "SerializationError",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]
