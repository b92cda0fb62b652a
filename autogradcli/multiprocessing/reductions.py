"""How tensors cross process boundaries: registered with multiprocessing's ForkingPickler (used
by ``Process`` arguments under spawn and by every ``Queue``), a CPU tensor moves to shared memory
and travels as a file descriptor, so the receiver maps the same memory (PyTorch's behaviour).
Ordinary pickling stays refused: only the processes a program starts receive tensors."""

from __future__ import annotations

from multiprocessing.reduction import DupFd, ForkingPickler
from typing import Any

import numpy as np

from ..backend import shared_memory
from ..nn.parameter import Parameter
from ..tensor.tensor import Tensor, wrap

_NON_LEAF = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
    "not support crossing process boundaries.  If you just want to transfer the data, call "
    "detach() on the tensor before serializing (e.g., putting it on the queue)."
)


def reduce_tensor(t: Tensor) -> tuple[Any, tuple]:
    """Share ``t`` (in place) and describe it by descriptor, offset and layout."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(_NON_LEAF)
    if t.device.type != "cpu":
        raise RuntimeError(
            "autogradcli.multiprocessing shares CPU tensors only; move CUDA tensors with "
            ".cpu() before sending them to another process"
        )
    t.share_memory_()
    segment, offset = shared_memory.find(t._data)
    arr = t._data
    layout = (arr.shape, arr.strides, arr.dtype.str)
    return _rebuild, (
        DupFd(segment.fd),
        segment.size,
        offset,
        layout,
        t.requires_grad,
        isinstance(t, Parameter),
    )


def _rebuild(
    fd: Any, size: int, offset: int, layout: tuple, requires_grad: bool, parameter: bool
) -> Tensor:
    segment = shared_memory.attach(fd.detach(), size)
    shape, strides, dtype = layout
    arr = shared_memory.array_in(segment, offset, shape, strides, np.dtype(dtype))
    if parameter:
        return Parameter(wrap(arr), requires_grad)
    return wrap(arr, requires_grad)


def init_reductions() -> None:
    """Register the tensor reductions (idempotent)."""
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
