"""``autogradcli.save`` and ``autogradcli.load``: one entry for every format.

``load`` recognises the file by its first bytes: an autogradcli checkpoint (a zip with
``header.json``), PyTorch's zip layout (``<archive>/data.pkl``), PyTorch's legacy pickle stream
or older tar archive, or a safetensors file. PyTorch files are unpickled with the
``weights_only`` allow-list unless the caller passes ``weights_only=False``. ``save`` writes
autogradcli's own format, except for objects holding an ``nn.Module``, which it pickles into
PyTorch's zip layout as ``torch.save(model, path)`` does.
"""

from __future__ import annotations

import os
import pickle
import zipfile
from typing import IO, Any

from ..nn.module import Module
from .archive import HEADER, load_archive, save_archive
from .format import SerializationError
from .safetensors_io import load_safetensors, looks_like_safetensors
from .torch_legacy import load_legacy
from .torch_tar import is_tar, load_tar
from .torch_writer import write_torch_file
from .torch_zip import load_torch_zip, torch_archive_prefix

PathOrFile = str | os.PathLike | IO[bytes]


def save(
    obj: Any,
    f: PathOrFile,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save ``obj`` to ``f`` (a path, written atomically, or a binary file).

    Tensors, numbers, strings and nested dicts/lists/tuples of them (state dicts, training
    checkpoints) go into autogradcli's checkpoint format, which never holds code. An object
    holding an ``nn.Module`` is pickled into PyTorch's zip layout, classes by reference, as
    ``torch.save(model, path)`` does; loading it back needs ``weights_only=False`` or the
    classes in ``add_safe_globals``. The other arguments are PyTorch's, accepted and unused.
    """
    if _holds_module(obj):
        write_torch_file(obj, f)
    else:
        save_archive(obj, f)


def _holds_module(obj: Any) -> bool:
    stack, seen = [obj], set()
    while stack:
        node = stack.pop()
        if isinstance(node, Module):
            return True
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return False


def load(
    f: PathOrFile,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load an autogradcli checkpoint, a PyTorch ``.pt``/``.pth``/``.bin`` file or a
    safetensors file, without running code from it.

    PyTorch files are unpickled with PyTorch 2.6's ``weights_only`` allow-list (``None``, the
    default, means ``True``): tensors, storages, dtypes and plain containers, plus the globals
    given to ``add_safe_globals``/``safe_globals``; anything else is refused by name.
    ``weights_only=False`` unpickles whatever the file holds (only for files you trust).

    ``map_location`` moves tensors: ``None`` restores each on the device it was saved from,
    ``'cpu'``/``'cuda:0'``/a ``device`` sends all there, a dict maps saved device names
    (``{'cuda:0': 'cpu'}``), and a callable gets the saved device name and returns the target,
    or in PyTorch's form gets ``(storage, location)`` and returns a storage
    (``lambda storage, loc: storage`` keeps everything on the CPU, ``storage.cuda(1)``).
    ``mmap=True`` maps the storages of a PyTorch zip file given by path copy-on-write, as
    PyTorch does (nothing is read until used; writes stay in memory); other files are read.
    """
    weights = weights_only is not False
    if isinstance(f, (str, os.PathLike)):
        where = repr(os.fspath(f))
        try:
            with open(f, "rb") as fh:
                return _load_from(fh, where, map_location, weights, f, bool(mmap))
        except OSError as err:
            raise SerializationError(f"cannot read checkpoint {where}: {err}") from err
    name = getattr(f, "name", None)
    where = repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"
    return _load_from(f, where, map_location, weights)


def _load_from(
    fh: IO[bytes],
    where: str,
    map_location: Any,
    weights_only: bool,
    path: Any = None,
    mmap: bool = False,
) -> Any:
    try:
        return _dispatch(fh, where, map_location, weights_only, path, mmap)
    except SerializationError as err:
        if str(err).startswith(where):
            raise
        raise type(err)(f"{where}: {err}") from err
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile) as err:
        raise SerializationError(f"{where} is truncated or corrupted: {err}") from err
    except (
        ValueError,
        KeyError,
        TypeError,
        RecursionError,
        OSError,
        pickle.UnpicklingError,
    ) as err:
        raise SerializationError(f"{where} is corrupted: {type(err).__name__}: {err}") from err


def _dispatch(
    fh: IO[bytes], where: str, map_location: Any, weights_only: bool, path: Any, mmap: bool
) -> Any:
    head = fh.read(512)
    fh.seek(-len(head), os.SEEK_CUR)
    if not head:
        raise SerializationError(f"{where} is empty: not an autogradcli checkpoint")
    if head.startswith(b"PK\x03\x04"):
        with zipfile.ZipFile(fh) as zf:
            names = zf.namelist()
            prefix = torch_archive_prefix(names)
            if HEADER in names or prefix is None:
                return load_archive(zf, where, map_location)
            mapped = os.fspath(path) if mmap and path is not None else None
            return load_torch_zip(zf, prefix, map_location, weights_only, where, mapped)
    if head[:1] == b"\x80":
        return load_legacy(fh, map_location, weights_only, where)
    if is_tar(head):
        return load_tar(fh, map_location, weights_only, where)
    start = fh.tell()
    size = fh.seek(0, os.SEEK_END) - start
    fh.seek(start)
    if looks_like_safetensors(head, size):
        return load_safetensors(fh if path is None else path, map_location)
    raise SerializationError(
        f"{where} is not an autogradcli checkpoint: it is not a zip archive, a PyTorch file or "
        f"a safetensors file (it starts with {head[:4]!r})"
    )
