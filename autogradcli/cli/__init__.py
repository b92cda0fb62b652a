"""The ``agrad`` command line (top layer; nothing imports it).

``main()`` is the console script's entry point. The command modules import the engine, the
config loader and the trainer lazily, inside each command, so ``agrad --help`` stays fast.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run ``agrad`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Exit codes: 0 ok, 1 a run or a check failed, 2 a usage, config or import error,
    130 interrupted.
    """
    from .app import run

    return run(list(sys.argv[1:] if argv is None else argv))
