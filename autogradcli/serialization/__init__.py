"""Saving and loading of tensors and nested containers without pickle (see ``archive``)."""

from .archive import FORMAT_NAME, FORMAT_VERSION, load, save
from .format import SerializationError

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "SerializationError", "load", "save"]
