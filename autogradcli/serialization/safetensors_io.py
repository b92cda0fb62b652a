"""safetensors files (a JSON header and raw little-endian data, never code) through the
``safetensors`` package's numpy API, imported only when used (``pip install
'autogradcli[safetensors]'``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from .. import backend
from .._utils.atomic import atomic_write_bytes
from ..tensor.tensor import Tensor, wrap
from .format import SerializationError, place
from .torch_tensors import BFLOAT16

MAX_HEADER_BYTES = 100 * 2**20  # the safetensors package's own limit


def _numpy_api() -> Any:
    try:
        import safetensors.numpy as st_numpy
    except ImportError:
        raise ImportError(
            "reading or writing safetensors files needs the safetensors package: "
            "pip install 'autogradcli[safetensors]'"
        ) from None
    return st_numpy


def save_safetensors(
    state_dict: Mapping[str, Any], path: str | os.PathLike, metadata: dict[str, str] | None = None
) -> None:
    """Write a flat ``{name: Tensor}`` dict (a state dict) as a safetensors file, atomically;
    ``metadata`` is a ``{str: str}`` dict stored in its header."""
    st_numpy = _numpy_api()
    arrays: dict[str, np.ndarray] = {}
    for name, value in state_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"safetensors keys are strings; got the key {name!r}")
        if not isinstance(value, (Tensor, np.ndarray)):
            raise TypeError(f"safetensors holds tensors only; {name!r} is a {type(value).__name__}")
        host = backend.to_numpy(value._data if isinstance(value, Tensor) else value)
        arrays[name] = np.ascontiguousarray(host)  # shared memory is written once per key
    if metadata is not None and not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise TypeError("safetensors metadata must be a dict of str to str")
    atomic_write_bytes(os.fspath(path), st_numpy.save(arrays, metadata=metadata))


def load_safetensors(path: str | os.PathLike | IO[bytes], map_location: Any = None) -> dict:
    """The ``{name: Tensor}`` dict of a safetensors file (bfloat16 stays bfloat16)."""
    st_numpy = _numpy_api()
    where = repr(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else "<file>"
    try:
        if isinstance(path, (str, os.PathLike)):
            arrays = st_numpy.load_file(os.fspath(path))
        else:
            arrays = _from_bytes(path.read())
    except (OSError, ValueError) as err:
        raise SerializationError(f"{where} is not a readable safetensors file: {err}") from err
    except Exception as err:  # the Rust reader's SafetensorError
        raise SerializationError(f"{where} is not a valid safetensors file: {err}") from err
    return {name: wrap(place(arr, "cpu", map_location)) for name, arr in arrays.items()}


_DTYPES = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "BF16": BFLOAT16,
    "I64": np.int64,
    "I32": np.int32,
    "I16": np.int16,
    "I8": np.int8,
    "U8": np.uint8,
    "BOOL": np.bool_,
}


def _from_bytes(data: bytes) -> dict[str, np.ndarray]:
    """The arrays of a safetensors file's bytes (the package's numpy ``load`` has no BF16)."""
    from safetensors import deserialize

    out = {}
    for name, view in deserialize(data):
        if view["dtype"] not in _DTYPES:
            raise ValueError(f"tensor {name!r} has dtype {view['dtype']}, which autogradcli lacks")
        dt = np.dtype(_DTYPES[view["dtype"]]).newbyteorder("<")
        out[name] = (
            np.frombuffer(view["data"], dtype=dt)
            .reshape(view["shape"])
            .astype(dt.newbyteorder("="))
        )
    return out


def looks_like_safetensors(head: bytes, size: int) -> bool:
    """Whether a file of ``size`` bytes starting with ``head`` (>= 9 bytes) is safetensors: a
    little-endian u64 header length that fits the file, then a JSON object."""
    if len(head) < 9:
        return False
    n = int.from_bytes(head[:8], "little")
    return 2 <= n <= min(size - 8, MAX_HEADER_BYTES) and head[8:9] == b"{"
