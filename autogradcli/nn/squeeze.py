"""``Squeeze`` and ``Unsqueeze``: shape layers for configs. autogradcli extras: ``torch.nn`` has
no such modules (write ``x.squeeze(dim)`` in a ``forward`` there). A regression model ending in
``Linear(..., 1)`` gives (N, 1); ``Squeeze`` (dim -1) makes that (N,) to match targets (N,)."""

from __future__ import annotations

from ..tensor.tensor import Tensor
from .module import Module

__all__ = ["Squeeze", "Unsqueeze"]


class Squeeze(Module):
    """Remove dim ``dim`` when it has size 1 (``Tensor.squeeze(dim)``; other sizes pass
    unchanged). An autogradcli extra, not in ``torch.nn``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = int(dim)

    def forward(self, input: Tensor) -> Tensor:
        return input.squeeze(self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Unsqueeze(Module):
    """Insert a dim of size 1 at ``dim`` (``Tensor.unsqueeze(dim)``). An autogradcli extra, not
    in ``torch.nn``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = int(dim)

    def forward(self, input: Tensor) -> Tensor:
        return input.unsqueeze(self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
