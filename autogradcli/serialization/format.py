"""The object tree of a checkpoint as JSON, with arrays referenced by name (no code, ever).

``encode(obj)`` turns a Python object into a JSON-safe tree plus a list of arrays to store;
``decode(tree, read_array)`` rebuilds the object. JSON natives stand for themselves where that is
unambiguous (``null``, ``true``/``false``, strings, lists, ints below 2**53, finite floats);
everything else is a JSON object tagged by its ``"$"`` member:

==================  ============================================================================
``"$"``             members
==================  ============================================================================
``"dict"``          ``"items"``: ``[[key, value], ...]`` in insertion order; keys are encoded
                    values (str, int, float, bool, None or tuples of them), so int keys stay ints
``"tuple"``         ``"items"``: the elements
``"int"``           ``"v"``: the decimal digits of an int of any size (|v| >= 2**53)
``"float"``         ``"v"``: ``"nan"``, ``"inf"`` or ``"-inf"``
``"tensor"``        ``"file"``, ``"dtype"``, ``"shape"``, ``"device"``, ``"requires_grad"``
``"ndarray"``       ``"file"``, ``"dtype"``, ``"shape"`` (a numpy array; ``"scalar": true`` for a
                    numpy scalar such as ``np.float32(1.5)``)
``"dtype"``         ``"name"``: an autogradcli dtype (``autogradcli.float32``)
``"device"``        ``"name"``: ``"cpu"``, ``"cuda:0"``...
==================  ============================================================================

A tensor (or array) object that appears more than once is stored once and comes back as one
object. OrderedDicts come back as plain dicts in the same order; namedtuples as tuples; a
``Parameter`` as a plain Tensor with ``requires_grad=True``; gradients are not stored.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend
from ..tensor import dtype as dtypes
from ..tensor.tensor import Tensor, wrap

_JSON_INT_LIMIT = 2**53  # ints beyond this lose precision in most JSON readers: stored as text


class SerializationError(RuntimeError):
    """A file could not be loaded (corrupted, truncated, foreign or from a newer version)."""


def encode(obj: Any) -> tuple[Any, list[tuple[str, np.ndarray]]]:
    """The JSON tree of ``obj`` and the ``(member name, host array)`` pairs it references."""
    arrays: list[tuple[str, np.ndarray]] = []
    memo: dict[int, dict[str, Any]] = {}
    return _encode(obj, arrays, memo, "obj"), arrays


def _encode(obj: Any, arrays: list, memo: dict, where: str) -> Any:
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        obj = int(obj)  # IntEnum and friends become plain ints
        return obj if abs(obj) < _JSON_INT_LIMIT else {"$": "int", "v": str(obj)}
    if isinstance(obj, float):
        if math.isfinite(obj):
            return float(obj)
        return {"$": "float", "v": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
    if isinstance(obj, (Tensor, np.ndarray, np.generic)):
        return _encode_array(obj, arrays, memo)
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not _is_key(key):
                raise TypeError(
                    f"cannot save the dict key {key!r} ({type(key).__name__}) at {where}: keys "
                    "must be str, int, float, bool, None or tuples of them"
                )
            items.append(
                [
                    _encode(key, arrays, memo, where),
                    _encode(value, arrays, memo, f"{where}[{key!r}]"),
                ]
            )
        return {"$": "dict", "items": items}
    if isinstance(obj, (list, tuple)):
        out = [_encode(v, arrays, memo, f"{where}[{i}]") for i, v in enumerate(obj)]
        return out if isinstance(obj, list) else {"$": "tuple", "items": out}
    if isinstance(obj, dtypes.DType):
        return {"$": "dtype", "name": obj.name}
    if isinstance(obj, backend.Device):
        return {"$": "device", "name": str(obj)}
    hint = ""
    if callable(getattr(obj, "state_dict", None)):
        # torch.save(model) pickles the object, and loading a pickle can run code: save the state
        hint = (
            f"; to save a {type(obj).__name__}, save its state instead: "
            "autogradcli.save(obj.state_dict(), path), and restore it with "
            "obj.load_state_dict(autogradcli.load(path)) on a newly built object"
        )
    raise TypeError(
        f"cannot save an object of type {type(obj).__name__} at {where}: autogradcli.save "
        "supports dicts, lists, tuples, Tensors, numpy arrays, numbers, bools, strings and None"
        + hint
    )


def _is_key(key: Any) -> bool:
    if key is None or isinstance(key, (bool, int, float, str)):
        return True
    return isinstance(key, tuple) and all(_is_key(k) for k in key)


def _encode_array(obj: Any, arrays: list, memo: dict) -> dict[str, Any]:
    node = memo.get(id(obj))
    if node is not None:
        return node
    if isinstance(obj, Tensor):
        host = _c_order(backend.to_numpy(obj._data))
        node = {"$": "tensor", "device": str(obj.device), "requires_grad": obj.requires_grad}
    else:
        host = _c_order(np.asarray(obj))
        if host.dtype.hasobject:
            raise TypeError("cannot save a numpy array of Python objects (it would need pickle)")
        node = {"$": "ndarray"}
        if isinstance(obj, np.generic):
            node["scalar"] = True
    name = f"tensors/{len(arrays)}.npy"
    dtype_text = host.dtype.str
    if host.dtype.name == "bfloat16":  # .npy has no bfloat16: stored as its 16-bit patterns
        host, dtype_text = host.view(np.uint16), "bfloat16"
    node.update(file=name, dtype=dtype_text, shape=list(host.shape))
    arrays.append((name, host))
    memo[id(obj)] = node
    return node


def _c_order(arr: np.ndarray) -> np.ndarray:
    """``arr`` in C order; unlike ``np.ascontiguousarray`` this keeps 0-d arrays 0-d."""
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


ArrayReader = Callable[[str], np.ndarray]


def decode(tree: Any, read_array: ArrayReader, map_location: Any = None) -> Any:
    """Rebuild the object of ``tree``; ``read_array(name)`` returns a stored host array."""
    memo: dict[str, Any] = {}
    return _decode(tree, read_array, map_location, memo)


def _decode(node: Any, read: ArrayReader, map_location: Any, memo: dict) -> Any:
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(v, read, map_location, memo) for v in node]
    if not isinstance(node, dict):
        raise ValueError(f"unexpected JSON value of type {type(node).__name__}")
    tag = node.get("$")
    if tag == "dict":
        out = {}
        for key, value in node["items"]:
            out[_decode(key, read, map_location, memo)] = _decode(value, read, map_location, memo)
        return out
    if tag == "tuple":
        return tuple(_decode(v, read, map_location, memo) for v in node["items"])
    if tag == "int":
        return int(node["v"])
    if tag == "float":
        return float({"nan": "nan", "inf": "inf", "-inf": "-inf"}[node["v"]])
    if tag == "dtype":
        return dtypes.to_dtype(node["name"])
    if tag == "device":
        return _target_device(node["name"], None)
    if tag in ("tensor", "ndarray"):
        name = node["file"]
        if name not in memo:
            memo[name] = _decode_array(node, read(name), map_location)
        return memo[name]
    raise ValueError(f"unknown node tag {tag!r}")


def _decode_array(node: dict, host: np.ndarray, map_location: Any) -> Any:
    bits = node["dtype"] == "bfloat16"
    expected = np.dtype(np.uint16).str if bits else node["dtype"]
    if host.dtype.str != expected or list(host.shape) != list(node["shape"]):
        raise ValueError(
            f"{node['file']} holds {host.dtype.str} {list(host.shape)} but the header says "
            f"{node['dtype']} {node['shape']}"
        )
    if bits:
        host = host.view(dtypes.bfloat16.np)
    if node["$"] == "ndarray":
        return host[()] if node.get("scalar") else host
    dtypes.from_numpy_dtype(host.dtype)  # a dtype tensors support, or TypeError
    out = wrap(place(host, node["device"], map_location))
    if node["requires_grad"]:
        out.requires_grad = True
    return out


def place(host: np.ndarray, saved: str, map_location: Any) -> Any:
    """``host`` moved to where ``map_location`` sends a tensor saved on device ``saved``."""
    device = _target_device(saved, map_location)
    if device.type == "cpu":
        return host
    try:
        return backend.to_device(host, device)
    except RuntimeError as err:
        raise SerializationError(
            f"a tensor was saved on {saved} and cannot be restored there ({err}); "
            "pass map_location='cpu' to load it on the CPU"
        ) from err


def _target_device(saved: str, map_location: Any) -> backend.Device:
    if map_location is None:
        try:
            return backend.Device(saved)
        except (RuntimeError, TypeError, ValueError):
            raise ValueError(f"a tensor names an unknown device {saved!r}") from None
    if isinstance(map_location, dict):
        return backend.as_device(map_location.get(saved, saved))
    if callable(map_location):
        if not _takes_two(map_location):
            return backend.as_device(map_location(saved))
        moved = map_location(_StorageStandIn(backend.Device("cpu")), saved)
        return moved.device if isinstance(moved, _StorageStandIn) else backend.as_device(moved)
    return backend.as_device(map_location)


def _takes_two(fn: Any) -> bool:
    """Whether ``fn`` is PyTorch's ``map_location(storage, location)`` rather than ours."""
    import inspect

    try:
        inspect.signature(fn).bind(None, None)
    except (TypeError, ValueError):
        return False
    return True


class _StorageStandIn:
    """The storage a PyTorch-style ``map_location(storage, location)`` gets (on the CPU, as
    PyTorch's is): ``lambda storage, loc: storage`` keeps tensors on the CPU,
    ``storage.cuda(1)`` sends them to ``cuda:1``."""

    def __init__(self, device: backend.Device) -> None:
        self.device = device

    def cpu(self) -> _StorageStandIn:
        return _StorageStandIn(backend.Device("cpu"))

    def cuda(self, device: Any = None, non_blocking: bool = False) -> _StorageStandIn:
        if device is None or isinstance(device, int):
            return _StorageStandIn(backend.Device("cuda", device))
        return _StorageStandIn(backend.as_device(device))

    def to(self, device: Any, non_blocking: bool = False) -> _StorageStandIn:
        return _StorageStandIn(backend.as_device(device))


def warn_caller(message: str) -> None:
    """A ``UserWarning`` attributed to the first caller outside this package (the user's
    ``load`` call, however deep inside the readers it is raised)."""
    here = os.path.dirname(os.path.abspath(__file__))
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)
