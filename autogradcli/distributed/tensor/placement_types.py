"""How a DTensor's global tensor lies on a mesh dimension: ``Shard(dim)`` or ``Replicate()``."""

from __future__ import annotations


class Placement:
    """The base class of the placement types."""

    def is_shard(self, dim: int | None = None) -> bool:
        return False

    def is_replicate(self) -> bool:
        return False


class Shard(Placement):
    """Each rank holds one ``torch.chunk`` of the global tensor along ``dim``."""

    def __init__(self, dim: int) -> None:
        self.dim = int(dim)

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash(("Shard", self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"


class Replicate(Placement):
    """Every rank holds the whole tensor."""

    def is_replicate(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Replicate)

    def __hash__(self) -> int:
        return hash("Replicate")

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


def chunk_bounds(size: int, world: int, rank: int) -> tuple[int, int]:
    """Rank ``rank``'s [start, stop) of ``size`` split as ``torch.chunk(world)`` splits it."""
    step = -(-size // world) if size else 0
    start = min(rank * step, size)
    return start, min(start + step, size)


__all__ = ["Placement", "Replicate", "Shard", "chunk_bounds"]
