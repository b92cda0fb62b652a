"""Errors raised in the user's own code (a Module's ``forward``, a Function's ``backward``, a
callback): the message names the user's file, line and source line, not our traceback."""

from __future__ import annotations

import linecache
import os
import sysconfig
import traceback

__all__ = ["user_error_text", "user_frame"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARIES = tuple(
    os.path.abspath(p) + os.sep
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    if p
)


def _is_users(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return not path.startswith(_PACKAGE) and not path.startswith(_LIBRARIES)


def user_frame(err: BaseException) -> traceback.FrameSummary | None:
    """The last traceback frame of ``err`` in the user's code (neither autogradcli nor Python's
    or an installed library's), or None."""
    found = None
    for frame in traceback.extract_tb(err.__traceback__):
        if _is_users(frame.filename):
            found = frame
    return found


def user_error_text(err: BaseException) -> str:
    """``Type: message`` and, when it came from the user's code, where::

    NameError: name 'scale' is not defined
      at my_functions.py:14, in backward
        return grad_output * scale
    """
    if type(err).__name__ == "RunFolderError":  # ours, and it names its file
        return str(err)
    if isinstance(err, SystemExit):
        text = f"the user's code called sys.exit({err.code!r})"
    else:
        text = f"{type(err).__name__}: {err}"
    frame = user_frame(err)
    if frame is None:
        return text
    try:
        where = os.path.relpath(frame.filename)
    except ValueError:  # another drive
        where = frame.filename
    if where.startswith(os.pardir + os.sep + os.pardir):
        where = frame.filename
    line = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
    text += f"\n  at {where}:{frame.lineno}, in {frame.name}"
    if line:
        text += f"\n    {line}"
    return text
