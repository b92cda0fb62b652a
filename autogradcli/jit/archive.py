"""``torch.jit.save`` / ``torch.jit.load`` without TorchScript: ``save`` writes the module as
``autogradcli.save(model, f)`` does (its classes by reference), and ``load`` reads such a file
back, trusting it as ``torch.jit.load`` trusts the code in an archive. A real TorchScript archive
holds compiled TorchScript that only PyTorch's interpreter runs: it is refused, with what to do."""

from __future__ import annotations

import os
import zipfile
from typing import IO, Any

from ..serialization import load as load_file
from ..serialization import save as save_file

PathOrFile = str | os.PathLike | IO[bytes]


def save(m: Any, f: PathOrFile, _extra_files: Any = None) -> None:
    """Write module ``m`` so that ``jit.load`` (or ``autogradcli.load(..., weights_only=False)``)
    returns it."""
    if _extra_files:
        raise NotImplementedError("jit.save: _extra_files are not supported (no TorchScript)")
    save_file(m, f)


def _is_torchscript(f: PathOrFile) -> bool:
    """A TorchScript archive: a zip whose record folder has ``code/`` or ``constants.pkl``."""
    try:
        with zipfile.ZipFile(f) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    finally:
        if hasattr(f, "seek"):
            f.seek(0)
    return any("/code/" in n or n.endswith("/constants.pkl") for n in names)


def load(f: PathOrFile, map_location: Any = None, _extra_files: Any = None) -> Any:
    """The module ``jit.save`` wrote; a TorchScript archive from PyTorch is refused."""
    if _is_torchscript(f):
        where = os.fspath(f) if isinstance(f, (str, os.PathLike)) else "the file"
        raise RuntimeError(
            f"{where} is a TorchScript archive: it holds compiled TorchScript, which only "
            "PyTorch's interpreter runs. Save the weights in PyTorch instead "
            "(torch.save(model.state_dict(), path)) and load them here into the same model "
            "written in Python: model.load_state_dict(autogradcli.load(path))"
        )
    return load_file(f, map_location=map_location, weights_only=False)
