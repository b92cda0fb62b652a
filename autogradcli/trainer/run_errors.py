"""What goes wrong writing a run folder, said for a person: the errors and their messages."""

from __future__ import annotations

import errno

__all__ = ["RunFolderError", "RunFolderNotMade", "os_reason", "write_error"]


class RunFolderError(RuntimeError):
    """A run folder's file could not be written (disk full, quota, permissions) or read (not a
    run folder's file): the message names the file and what is wrong."""


class RunFolderNotMade(RunFolderError):
    """A new run folder could not be made (disk full...): nothing was left behind and no run
    started, so it is a usage error (exit 2), not a failed run."""


def os_reason(err: OSError) -> str:
    """What ``err`` means for a person: ``the disk is full (No space left on device)``..."""
    reason = err.strerror or str(err)
    if err.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        reason = f"the disk is full ({reason})"
    elif err.errno == errno.EFBIG:
        reason = f"the file size limit was reached ({reason})"
    return reason


def write_error(path: str, err: OSError) -> RunFolderError:
    """A ``RunFolderError`` for ``err`` (raised writing ``path``) that says what happened."""
    return RunFolderError(f"cannot write {path}: {os_reason(err)}")
