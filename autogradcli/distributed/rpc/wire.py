"""What crosses the sockets: length-prefixed pickles in which tensors travel as host arrays.

RPC runs the caller's functions by reference on the callee (as torch's RPC does), so peers must
trust each other. A tensor that requires grad is noted while pickling (the sender's half of a
distributed autograd edge) and arrives as a leaf that requires grad (the receiver's half).
"""

from __future__ import annotations

import io
import pickle
import socket
import struct
import threading
from typing import Any

from ...nn.parameter import Parameter
from ...tensor.tensor import Tensor, wrap

_HEADER = struct.Struct("!Q")
_received = threading.local()  # the leaves made while unpickling one message


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.grad_tensors: list[Tensor] = []

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, Tensor):
            return NotImplemented
        requires_grad = obj.requires_grad
        index = -1
        if requires_grad:
            index = len(self.grad_tensors)
            self.grad_tensors.append(obj)
        data = obj.detach().cpu()._data
        return _rebuild_tensor, (data, requires_grad, isinstance(obj, Parameter), index)


def _rebuild_tensor(data: Any, requires_grad: bool, parameter: bool, index: int) -> Tensor:
    t = Parameter(wrap(data), requires_grad) if parameter else wrap(data, requires_grad)
    if index >= 0:
        leaves = getattr(_received, "leaves", None)
        if leaves is not None:
            leaves[index] = t
    return t


def dumps(obj: Any) -> tuple[bytes, list[Tensor]]:
    """``obj`` pickled, and the tensors in it that require grad (in the order they were met)."""
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(obj)
    return buf.getvalue(), pickler.grad_tensors


def loads(data: bytes) -> tuple[Any, list[Tensor]]:
    """The object, and the leaves that stand for the sender's tensors that require grad."""
    _received.leaves = leaves = {}
    try:
        obj = pickle.loads(data)
    finally:
        _received.leaves = None
    return obj, [leaves[i] for i in sorted(leaves)]


def send_frame(sock: socket.socket, lock: threading.Lock, data: bytes) -> None:
    """Write one length-prefixed frame (whole, under ``lock``)."""
    with lock:
        sock.sendall(_HEADER.pack(len(data)) + data)


def recv_frame(sock: socket.socket) -> bytearray | None:
    """Read one frame; None when the peer closed the connection."""
    header = _recv_exactly(sock, _HEADER.size)
    if header is None:
        return None
    return _recv_exactly(sock, _HEADER.unpack(bytes(header))[0])


def _recv_exactly(sock: socket.socket, n: int) -> bytearray | None:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        try:
            k = sock.recv_into(view[got:], n - got)
        except OSError:
            return None
        if k == 0:
            return None
        got += k
    return buf
