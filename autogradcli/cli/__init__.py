"""The ``agrad`` command line (top layer)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``agrad`` console script."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("--version", "-V"):
        from .._version import __version__

        print(f"agrad {__version__}")
        return 0
    print("usage: agrad [--version]")
    return 0
