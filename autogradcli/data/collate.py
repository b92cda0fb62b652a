"""``default_collate`` and ``default_convert``: how a DataLoader turns samples into a batch
(PyTorch's rules: tensors, numpy arrays and numbers are stacked along a new first dim; mappings,
namedtuples and sequences are collated field by field; strings stay a list)."""

from __future__ import annotations

import collections.abc
import copy
from typing import Any

import numpy as np

from .. import backend
from ..tensor.factory import as_array
from ..tensor.tensor import Tensor, wrap

__all__ = ["default_collate", "default_convert"]

_ERR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _numeric(arr: np.ndarray | np.generic) -> bool:
    return np.asarray(arr).dtype.kind in "biuf"


def _from_numpy(arr: Any) -> Tensor:
    """A numeric numpy array or scalar as a tensor of its dtype (wide unsigned ints as int64)."""
    a = np.asarray(arr)
    return wrap(as_array(a if a.flags.c_contiguous else a.copy()))


def default_convert(data: Any) -> Any:
    """Samples as tensors without batching (``batch_size=None``): numpy arrays and numpy scalars
    become tensors, containers are converted element by element, anything else is kept."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)):
        return _from_numpy(data) if _numeric(data) else data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def default_collate(batch: list[Any]) -> Any:
    """Merge a list of samples into a batch, like PyTorch's ``default_collate``.

    Tensors are stacked (dtype kept); numpy arrays and numpy scalars become stacked tensors of
    their dtype; Python floats a float64 tensor, ints int64, bools bool; strings stay a list;
    mappings and namedtuples keep their type; tuples and lists come back as lists of batches.
    """
    if len(batch) == 0:
        raise IndexError("default_collate: the batch is empty (a sampler gave no indices)")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack([t._data for t in batch])
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        if not _numeric(elem):
            raise TypeError(_ERR.format(np.asarray(elem).dtype))
        if isinstance(elem, np.ndarray) and elem.shape != ():
            if all(type(a) is np.ndarray and a.dtype == elem.dtype for a in batch):
                _same_shape(batch)  # one stack, then one conversion: not one per sample
                return _from_numpy(np.stack(batch))
            return _stack([_from_numpy(a)._data for a in batch])
        return _from_numpy(np.asarray(batch))
    if isinstance(elem, bool):
        return wrap(np.asarray(batch, dtype=np.bool_))
    if isinstance(elem, int):
        return wrap(np.asarray(batch, dtype=np.int64))
    if isinstance(elem, float):
        return wrap(np.asarray(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(
            elem, {key: default_collate([d[key] for d in batch]) for key in elem}
        )
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        return _rebuild_sequence(elem, columns)
    raise TypeError(_ERR.format(type(elem)))


def _rebuild_mapping(elem: collections.abc.Mapping, values: dict[Any, Any]) -> Any:
    """``values`` in a mapping of ``elem``'s type where it can be made, else a dict."""
    if isinstance(elem, collections.abc.MutableMapping):
        clone = copy.copy(elem)
        clone.update(values)
        return clone
    try:
        return type(elem)(values)
    except TypeError:
        return values


def _rebuild_sequence(elem: collections.abc.Sequence, values: list[Any]) -> Any:
    if isinstance(elem, list) and type(elem) is list:
        return values
    try:
        return type(elem)(values)
    except TypeError:
        return values


def _same_shape(arrays: list[Any]) -> None:
    """PyTorch's error for samples of different shapes."""
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at "
                f"entry 0 and {list(a.shape)} at entry {i}"
            )


def _stack(arrays: list[Any]) -> Tensor:
    first = arrays[0]
    _same_shape(arrays)
    for a in arrays:
        if backend.device_of(a) != backend.device_of(first):
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two "
                f"devices, {backend.device_of(first)} and {backend.device_of(a)}!"
            )
    return wrap(backend.array_module(first).stack(arrays))
