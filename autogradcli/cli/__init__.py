"""The ``agrad`` command line (top layer; nothing imports it).

``main()`` is the console script's entry point. The command modules import the engine, the
config loader and the trainer lazily, inside each command, so ``agrad --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import sys

from .console import guard_standard_streams

__all__ = ["main"]


def _interrupt_like_ctrl_c() -> None:
    """SIGTERM (a process manager) and SIGHUP (a closed terminal) end agrad as Ctrl-C does:
    ``KeyboardInterrupt``, which a training run turns into ``interrupted`` with its last
    checkpoint saved. A signal the caller set to be ignored (``nohup``) stays ignored."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, signal.default_int_handler)


def main(argv: list[str] | None = None) -> int:
    """Run ``agrad`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Exit codes: 0 ok, 1 a run or a check failed, 2 a usage, config or import error,
    130 interrupted (Ctrl-C, SIGTERM or SIGHUP).
    """
    if argv is None:  # the process is agrad (not main() called inside another program)
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            _interrupt_like_ctrl_c()
        guard_standard_streams()
    try:
        from .app import run
    except KeyboardInterrupt:  # Ctrl-C while the command line is still importing
        print("agrad: interrupted", file=sys.stderr)
        return 130
    try:
        return run(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as err:  # sys.exit() in the user's code (a layer built from the config)
        from .._utils.user_code import user_error_text

        print(f"agrad: error: {user_error_text(err)}", file=sys.stderr)
        return 1
