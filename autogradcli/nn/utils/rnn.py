"""Variable-length sequences for recurrent layers (``torch.nn.utils.rnn``): ``PackedSequence``
and the functions that pad, pack and unpack batches of sequences.

A packed batch stores the sequences sorted by decreasing length, time-major: the rows of step
``t`` are the first ``batch_sizes[t]`` sequences. Every conversion here is one gather (indexing
with an index built on the host), so gradients flow through them as through any indexing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import numpy as np

from ...backend import to_numpy
from ...ops.join import cat
from ...ops.sorting import sort
from ...tensor.factory import full, tensor
from ...tensor.tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

_UNSORTED = (
    "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
    "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
    "requirement if you do not need ONNX exportability."
)


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _cast(dtype: str) -> Callable[[PackedSequence], PackedSequence]:
    """A PackedSequence method converting ``data`` to ``dtype`` (``.double()``, ...)."""

    def convert(self: PackedSequence) -> PackedSequence:
        return self.to(dtype=dtype)

    convert.__doc__ = f"The packed batch with ``data`` as {dtype}."
    return convert


class PackedSequence(_PackedFields):
    """A batch of sequences packed time-major (``data``), with the number of sequences still
    running at each step (``batch_sizes``, an int64 CPU tensor) and the sort permutation."""

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the indices follow ``data``'s device. ``self`` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_i, unsorted_i = (
            None if t is None else t.to(data.device)
            for t in (self.sorted_indices, self.unsorted_indices)
        )
        return type(self)(data, self.batch_sizes, sorted_i, unsorted_i)

    def cuda(self, device: Any = None, **kwargs: Any) -> PackedSequence:
        """The packed batch on the GPU (``device``: an index, a name or a device)."""
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device, **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The packed batch on the CPU."""
        return self.to("cpu", *args, **kwargs)

    def pin_memory(self) -> PackedSequence:
        """Pinned memory is a CUDA host-allocation detail; numpy memory is returned as it is."""
        return self

    double = _cast("float64")
    float = _cast("float32")
    half = _cast("float16")
    long = _cast("int64")
    int = _cast("int32")
    short = _cast("int16")
    char = _cast("int8")
    byte = _cast("uint8")

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on the GPU."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        """Whether ``data`` is in pinned memory (never, without CUDA host allocations)."""
        return self.data.is_pinned()


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of the 1-D index permutation ``permutation`` (None for None)."""
    if permutation is None:
        return None
    host = to_numpy(permutation._data)
    inverse = np.empty_like(host)
    inverse[host] = np.arange(host.size, dtype=host.dtype)
    return tensor(inverse, device=permutation.device)


def _host_ints(values: Any) -> np.ndarray:
    return np.asarray(to_numpy(values._data) if isinstance(values, Tensor) else values)


def _gather(rows: Tensor, index: np.ndarray) -> Tensor:
    """``rows[index]`` with ``index`` (any shape) moved to ``rows``' device: one indexing op."""
    return rows[tensor(index.astype(np.int64), device=rows.device)]


def _check_lengths(lengths: Any, batch: int, steps: int, enforce_sorted: bool) -> np.ndarray:
    """``lengths`` as int64 host integers, refused with PyTorch's errors (and a clear one for a
    length past the padded input, where PyTorch reads past its end)."""
    if isinstance(lengths, Tensor) and (lengths.ndim != 1 or lengths.device.type != "cpu"):
        raise RuntimeError(
            "'lengths' argument should be a 1D CPU int64 tensor, but got "
            f"{lengths.ndim}D {lengths.device.type} Long tensor"
        )
    host = _host_ints(lengths).astype(np.int64).reshape(-1)
    if host.size != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {host.size} "
            f"(batch_size={batch})"
        )
    if enforce_sorted and np.any(host[1:] > host[:-1]):
        raise RuntimeError(_UNSORTED)
    if host.size and host.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if host.size and host.max() > steps:
        raise RuntimeError(
            f"pack_padded_sequence: a length of {int(host.max())} is longer than the padded "
            f"input's {steps} time steps"
        )
    return host


def _batch_sizes(sorted_lengths: np.ndarray) -> np.ndarray:
    """How many of the (decreasing) lengths exceed each time step."""
    steps = np.arange(int(sorted_lengths[0]) if sorted_lengths.size else 0)
    return (sorted_lengths[None, :] > steps[:, None]).sum(1).astype(np.int64)


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded ``(T, B, *)`` batch (``(B, T, *)`` with ``batch_first``) of sequences of
    ``lengths``; ``enforce_sorted=False`` sorts them by decreasing length first."""
    batch_dim = 0 if batch_first else 1
    if input.ndim < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{max(input.ndim, 1)}, "
            f"{max(input.ndim, 1) - 1}], but got 1)"
        )
    batch, steps = input.shape[batch_dim], input.shape[1 - batch_dim]
    host = _check_lengths(lengths, batch, steps, enforce_sorted)
    sorted_indices = None
    order = np.arange(batch)
    if not enforce_sorted:
        _, sorted_indices = sort(tensor(host), descending=True)
        order = to_numpy(sorted_indices._data)
        sorted_indices = sorted_indices.to(input.device)
    sizes = _batch_sizes(host[order])
    # the packed rows of step t are the sorted sequences 0..sizes[t]-1 at that step
    t = np.repeat(np.arange(sizes.size), sizes)
    j = order[np.arange(t.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)]
    flat = j * steps + t if batch_first else t * batch + j
    rows = input.reshape(batch * steps, *input.shape[2:])
    return PackedSequence(_gather(rows, flat), tensor(sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Unpack to a padded ``(T, B, *)`` batch (``(B, T, *)`` with ``batch_first``) in the
    original order, and the lengths (int64); ``total_length`` pads T further."""
    data = sequence.data
    sizes = _host_ints(sequence.batch_sizes).astype(np.int64)
    steps = sizes.size
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps = total_length
    batch = int(sizes[0]) if sizes.size else 0
    lengths = (sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    position = np.arange(batch)  # each original sequence's place in the sorted order
    if sequence.unsorted_indices is not None:
        position = _host_ints(sequence.unsorted_indices).astype(np.int64)
        lengths = lengths[position]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    t = np.arange(steps)[:, None]
    running = np.zeros((steps, batch), bool)
    running[: sizes.size] = position[None, :] < sizes[:, None]
    offset_at = np.zeros(steps, np.int64)
    offset_at[: sizes.size] = offsets[:-1]
    index = np.where(running, offset_at[t] + position[None, :], data.shape[0])  # pad row last
    pad = full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = _gather(cat([data, pad], 0), index.T if batch_first else index)
    return padded, tensor(lengths)


def pad_sequence(
    sequences: Any,
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``),
    padded with ``padding_value`` on the right (or ``padding_side="left"``)."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    for seq in sequences[1:]:
        _check_trailing(trailing, seq)
    lengths = np.array([s.shape[0] for s in sequences], np.int64)
    steps, total = int(lengths.max()), int(lengths.sum())
    pieces = [s.to(dtype=first.dtype) for s in sequences]
    pad = full((1, *trailing), padding_value, dtype=first.dtype, device=first.device)
    t = np.arange(steps)[None, :]
    shift = steps - lengths[:, None] if padding_side == "left" else 0
    inside = (t >= shift) & (t < shift + lengths[:, None])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[:, None]
    index = np.where(inside, starts + t - shift, total)  # (B, T); the pad row last
    return _gather(cat([*pieces, pad], 0), index if batch_first else index.T)


def _check_trailing(trailing: tuple, seq: Tensor) -> None:
    """PyTorch's error for a sequence whose trailing dims differ from the first sequence's."""
    other = tuple(seq.shape[1:])
    if other == trailing:
        return
    if len(other) == len(trailing):
        dim = next(i for i, (a, b) in enumerate(zip(trailing, other)) if a != b)
        raise RuntimeError(
            f"The size of tensor a ({trailing[dim]}) must match the size of tensor b "
            f"({other[dim]}) at non-singleton dimension {dim + 1}"
        )
    raise RuntimeError(
        f"pad_sequence: every sequence needs the trailing shape {list(trailing)} of the first "
        f"one, got {list(other)}"
    )


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list:
    """The list of sequences ``padded[:lengths[i], i]`` (``padded[i, :lengths[i]]`` with
    ``batch_first``); unlike PyTorch's, ``padded_sequences`` is left untransposed."""
    batched = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    counts = [int(n) for n in _host_ints(lengths).reshape(-1)]
    if len(counts) != batched.shape[0]:
        raise ValueError(
            f"unpad_sequence: {len(counts)} lengths for a batch of {batched.shape[0]} sequences"
        )
    return [_gather(batched[i], np.arange(n)) for i, n in enumerate(counts)]


def pack_sequence(sequences: list, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (``pad_sequence`` then ``pack_padded_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences of a packed batch, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
