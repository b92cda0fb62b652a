"""While the ``agrad`` process is still importing numpy and the engine, Ctrl-C prints one line
and exits 130 rather than a traceback from inside an import. Standard library only: it runs
first thing in ``autogradcli/__init__.py``; ``cli.main`` puts Python's handler back."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys

__all__ = ["is_agrad_process", "quiet_ctrl_c_while_starting"]


def is_agrad_process() -> bool:
    """Whether this interpreter was started as ``agrad`` or ``python -m autogradcli.cli``."""
    if os.path.basename(sys.argv[0] if sys.argv else "") in ("agrad", "agrad.exe"):
        return True
    argv = list(getattr(sys, "orig_argv", []))
    return any(a == "-m" and b == "autogradcli.cli" for a, b in itertools.pairwise(argv))


def _exit_interrupted(signum: int, frame: object) -> None:
    with contextlib.suppress(OSError):
        os.write(2, b"agrad: interrupted\n")
    os._exit(130)  # nothing has been written yet: there is nothing to save or flush


def quiet_ctrl_c_while_starting() -> None:
    """In the ``agrad`` process, until ``cli.main`` starts: Ctrl-C exits 130 with one line."""
    if not is_agrad_process():
        return
    import signal  # here, not at the top: its enums cost every other importer 40 KiB

    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _exit_interrupted)
    except (ValueError, OSError):  # not the main thread
        pass


quiet_ctrl_c_while_starting()
