"""rich consoles (colour on a terminal, plain text elsewhere) and standard streams that a closed
pipe (``agrad train ... | head -1``) or a closed stdout (``>&-``) cannot make fail."""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

__all__ = ["PipeSafeStream", "console", "guard_standard_streams"]


def console(stderr: bool = False) -> Any:
    """A rich Console; when not on a terminal, no colour and wide enough for the tables."""
    from rich.console import Console

    c = Console(stderr=stderr, highlight=False)
    if not c.is_terminal:
        c = Console(
            stderr=stderr,
            highlight=False,
            color_system=None,
            width=max(c.width, 120),
            force_terminal=False,
            emoji=False,
            soft_wrap=True,
        )
    return c


def _is_closed_pipe(err: BaseException) -> bool:
    return isinstance(err, BrokenPipeError) or (
        isinstance(err, OSError) and err.errno in (errno.EPIPE, errno.EBADF)
    )


class PipeSafeStream:
    """A text stream that, once its reader has gone (EPIPE: ``| head -1`` exited), sends what
    follows to ``os.devnull`` instead of raising: the output is lost, the run is not. Every
    other attribute is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.broken = False

    def _drop_output(self) -> None:
        self.broken = True
        try:  # the pending bytes and every later write go to /dev/null
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
            self._stream.flush()
        except (OSError, ValueError):
            self._stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, ValueError) as err:
            if not _is_closed_pipe(err) and not isinstance(err, ValueError):
                raise
            self._drop_output()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError) as err:
            if not _is_closed_pipe(err) and not isinstance(err, ValueError):
                raise
            self._drop_output()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _fill_closed_descriptors() -> None:
    """Open ``os.devnull`` on fds 0-2 where they are closed, so no file agrad opens later (a
    checkpoint) gets fd 1 or 2 and receives printed text."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def guard_standard_streams() -> None:
    """For the ``agrad`` process: closed standard descriptors are filled with ``/dev/null``;
    ``sys.stdout``/``sys.stderr`` stop raising once their pipe is closed."""
    _fill_closed_descriptors()
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:  # Python found the descriptor closed at start-up
            stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
        if not isinstance(stream, PipeSafeStream):
            setattr(sys, name, PipeSafeStream(stream))
