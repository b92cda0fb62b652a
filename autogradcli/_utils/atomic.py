"""Atomic file writes: write a temporary file in the target's folder, flush and fsync it, then
``os.replace`` it over the target and fsync the folder. A crash leaves either the old file or
the new one, never a torn one, and the temporary file is removed on failure. With
``durable=False`` the two fsyncs are skipped: still atomic against a crash of the process, but
a power loss may lose the write (for files rewritten often and rebuilt from durable ones).

Dependency-free (standard library only), so every layer can use it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any

__all__ = [
    "atomic_link",
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_text",
    "default_file_mode",
    "fsync_directory",
]


def default_file_mode(path: str) -> int:
    """Keep an existing file's permissions; otherwise what ``open`` would give (0o666 & ~umask)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def fsync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable where the platform allows it (POSIX)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike,
    mode: str = "wb",
    *,
    permissions: int | None = None,
    durable: bool = True,
    sync_folder: bool = True,
    **open_kwargs: Any,
) -> Iterator[IO[Any]]:
    """Open a temporary file to write ``path``'s new content; on leaving the block without an
    error it is fsynced (``durable``), given ``permissions`` (default: :func:`default_file_mode`)
    and moved over ``path``, then the folder is fsynced (``durable`` and ``sync_folder``; False
    when the caller fsyncs the folder once after several renames). ``open_kwargs`` (encoding,
    newline...) go to ``os.fdopen``."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **open_kwargs) as out:
            yield out
            out.flush()
            if durable:
                os.fsync(out.fileno())
        os.chmod(tmp, default_file_mode(path) if permissions is None else permissions)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable and sync_folder:
        fsync_directory(directory)


def atomic_link(source: str | os.PathLike, path: str | os.PathLike) -> bool:
    """Make ``path`` another name of the (durable, atomically written) file ``source``: a hard
    link under a temporary name moved over ``path``, then the folder fsynced. False, with
    ``path`` untouched, where the file system has no hard links (the caller writes a copy)."""
    source, path = os.fspath(source), os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.link.tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.link(source, tmp)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    fsync_directory(directory)
    return True


def atomic_write_bytes(
    path: str | os.PathLike, data: bytes, *, permissions: int | None = None
) -> None:
    """Replace ``path``'s content with ``data`` atomically."""
    with atomic_open(path, "wb", permissions=permissions) as out:
        out.write(data)


def atomic_write_text(
    path: str | os.PathLike,
    text: str,
    *,
    permissions: int | None = None,
    encoding: str = "utf-8",
    durable: bool = True,
    sync_folder: bool = True,
) -> None:
    """Replace ``path``'s content with ``text`` atomically (no newline translation)."""
    kwargs: dict[str, Any] = {"encoding": encoding, "newline": ""}
    kwargs.update(permissions=permissions, durable=durable, sync_folder=sync_folder)
    with atomic_open(path, "w", **kwargs) as out:
        out.write(text)
