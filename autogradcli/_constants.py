"""``torch``'s numeric constants and memory formats: ``inf``, ``nan``, ``pi``, ``e``,
``newaxis``, and ``preserve_format``/``contiguous_format``/``channels_last``(``_3d``), which
every op that takes ``memory_format`` accepts (arrays here are always in the default layout)."""

from __future__ import annotations

import math

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "e",
    "inf",
    "memory_format",
    "nan",
    "newaxis",
    "pi",
    "preserve_format",
]

inf = math.inf
nan = math.nan
pi = math.pi
e = math.e
newaxis = None


class memory_format:
    """A memory layout name; its repr is PyTorch's (``autogradcli.channels_last``)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"autogradcli.{self._name}"

    def __reduce__(self) -> str:
        return self._name


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
