"""Run a corpus program on PyTorch: ``autogradcli`` imports resolve to ``torch``.

Every ``import autogradcli...`` / ``from autogradcli... import ...`` maps to the module of the same
path under ``torch`` (``autogradcli.nn.functional`` -> ``torch.nn.functional``). The one name that is
not PyTorch's, ``autogradcli.data.load_digits`` (the bundled digits, standing in for torchvision's
MNIST), is served from the same ``.npz`` file as the same tensors, so the program sees identical data.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
from pathlib import Path

DIGITS = Path(__file__).resolve().parents[2] / "autogradcli" / "data" / "files" / "digits.npz"


def _torch_data_module() -> types.ModuleType:
    import numpy as np
    import torch
    from torch.utils.data import TensorDataset

    def load_digits(flatten: bool = False) -> TensorDataset:
        with np.load(DIGITS, allow_pickle=False) as npz:
            images, labels = npz["images"], npz["labels"]
        x = (images.astype(np.float32) / np.float32(16.0)).reshape(len(images), 1, 8, 8)
        if flatten:
            x = x.reshape(len(images), 64)
        return TensorDataset(torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64)))

    mod = types.ModuleType("autogradcli.data")
    mod.load_digits = load_digits
    return mod


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self._specs: dict[str, object] = {}

    def find_spec(self, name, path=None, target=None):
        if name == "autogradcli" or name.startswith("autogradcli."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        if spec.name == "autogradcli.data":
            return _torch_data_module()
        module = importlib.import_module("torch" + spec.name[len("autogradcli") :])
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # the import system stamps its own spec on the module: give torch's back
        original = self._specs.pop(module.__spec__.name, None)
        if original is not None:
            module.__spec__ = original


def install() -> None:
    """Map ``autogradcli`` imports to ``torch`` for the rest of this process."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
