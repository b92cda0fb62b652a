"""rich consoles: colour on a terminal, plain text (no control characters) elsewhere."""

from __future__ import annotations

from typing import Any


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
