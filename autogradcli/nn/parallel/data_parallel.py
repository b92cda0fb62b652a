"""``nn.DataParallel`` on one device: a transparent wrapper (``.module``, state-dict keys under
``module.``), as PyTorch's is where there is at most one GPU; ``data_parallel`` calls the module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Runs ``module`` on the one device it is on; splitting a batch across several GPUs is
    not done (use DistributedDataParallel under ``mpiexec`` for several processes)."""

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[Any] = []  # PyTorch's value where no GPU splits the batch
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """The wrapped module's output."""
        return self.module(*inputs, **kwargs)


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids: Sequence[Any] | None = None,
    output_device: Any = None,
    dim: int = 0,
    module_kwargs: Any = None,
) -> Any:
    """``module(*inputs, **module_kwargs)`` (``inputs`` a tuple, or one input)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
