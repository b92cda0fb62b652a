"""Saving and loading: autogradcli's own checkpoints (``archive``: JSON and .npy, no pickle),
PyTorch's ``.pt`` files (read with an allow-list unpickler) and safetensors files."""

from .archive import FORMAT_NAME, FORMAT_VERSION
from .entry import load, save
from .format import SerializationError
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from .safetensors_io import load_safetensors, save_safetensors
from .torch_writer import save_torch
from .torch_zip import get_unsafe_globals_in_checkpoint

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "SerializationError",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "load",
    "load_safetensors",
    "safe_globals",
    "save",
    "save_safetensors",
    "save_torch",
]
