"""The datasets ``dataset: text`` hands to a DataLoader: windows of one array of token ids
(next-token prediction) and padded id rows with class targets (classification)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dataset import Dataset

__all__ = ["BlockWindows", "PaddedTexts"]


class BlockWindows(Dataset):
    """Sample ``k`` is block ``rows[k]`` of ``ids``: ``x = ids[i:i+T]``, ``y = ids[i+1:i+T+1]``
    with ``i = rows[k] * (T + 1)``, both views of ``ids`` (nothing is copied per sample). A
    DataLoader's batched fetch (``__getitems__``) gathers its blocks at once as int64 ids, the
    dtype Embedding and CrossEntropyLoss take, whatever compact dtype ``ids`` has."""

    def __init__(self, ids: np.ndarray, rows: Sequence[int], block_size: int) -> None:
        self.ids, self.block_size = ids, block_size
        self.rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        self._span = np.arange(block_size + 1, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def __getitem__(self, index: int) -> Any:
        start = int(self.rows[index]) * (self.block_size + 1)
        return self.ids[start : start + self.block_size], self.ids[
            start + 1 : start + 1 + self.block_size
        ]

    def __getitems__(self, indices: Sequence[int]) -> list[Any]:
        """The samples at ``indices`` as rows of one int64 (len(indices), T + 1) array."""
        starts = self.rows[np.asarray(indices, dtype=np.int64)] * (self.block_size + 1)
        blocks = np.asarray(self.ids[starts[:, None] + self._span], dtype=np.int64)
        return [(block[:-1], block[1:]) for block in blocks]


class PaddedTexts(Dataset):
    """Sample ``k`` is row ``k`` of ``ids`` (token ids padded or cut to one length) with its
    class index ``labels[k]``; without ``labels`` a sample is the ids alone."""

    def __init__(self, ids: np.ndarray, labels: np.ndarray | None = None) -> None:
        self.ids, self.labels = ids, labels

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __getitem__(self, index: int) -> Any:
        if self.labels is None:
            return self.ids[index]
        return self.ids[index], self.labels[index]
