"""Errors that are the user's, not the program's: printed as a message, exit code 2."""

from __future__ import annotations

import sys
import traceback
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def run_exit_code(status: str) -> int:
    """The exit code for a run that ended with ``status`` (anything unknown: failed); the
    trainer's table, which ``summary.json``'s ``exit_code`` comes from too."""
    from ..trainer.signals import run_exit_code as code_of

    return code_of(status)


class UserError(Exception):
    """A mistake in how agrad was called (bad --input spec, missing file, wrong target...)."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def _is(err: BaseException, name: str) -> bool:
    return any(cls.__name__ == name for cls in type(err).__mro__)


def report(err: BaseException, debug: bool) -> int:
    """Print ``err`` for a person (a traceback too with ``debug``) and return the exit code."""
    if debug:
        traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
    code, lines = describe(err)
    for line in lines:
        print(line, file=sys.stderr)
    if code == EXIT_FAILED and not debug:
        print("(run `agrad --debug ...` to see the Python traceback)", file=sys.stderr)
    return code


def describe(err: BaseException) -> tuple[int, list[str]]:
    """(exit code, lines) for an error."""
    if isinstance(err, UserError):
        return err.code, [f"agrad: error: {err}"]
    if _is(err, "ConfigError"):
        issues: list[Any] = list(getattr(err, "issues", []))
        n = len(issues)
        head = f"agrad: error: {n} problem{'s' if n != 1 else ''} in the config:"
        return EXIT_USAGE, [head, *(f"  {issue}" for issue in issues)]
    if _is(err, "SerializationError"):  # a checkpoint the user gave (or a run folder's)
        return EXIT_USAGE, [f"agrad: error: {err}"]
    if _is(err, "RunFolderNotMade"):  # a new run folder could not be made: nothing started
        return EXIT_USAGE, [f"agrad: error: {err}"]
    if _is(err, "RunFolderError"):  # a run folder's file could not be written (disk full)
        return EXIT_FAILED, [f"agrad: error: {err}"]
    if _is(err, "ImportPathError"):
        return EXIT_USAGE, [f"agrad: error: {err}"]
    if isinstance(err, (FileNotFoundError, IsADirectoryError, NotADirectoryError)):
        name = getattr(err, "filename", None)
        what = err.strerror or type(err).__name__
        return EXIT_USAGE, [f"agrad: error: {what}: {name}" if name else f"agrad: error: {err}"]
    if isinstance(err, PermissionError):
        return EXIT_USAGE, [f"agrad: error: permission denied: {err.filename}"]
    from .._utils.user_code import user_error_text

    return EXIT_FAILED, [f"agrad: error: {user_error_text(err)}"]
