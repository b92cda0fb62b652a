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
    with ``i = rows[k] * (T + 1)``, both views of ``ids`` (nothing is copied per sample)."""

    def __init__(self, ids: np.ndarray, rows: Sequence[int], block_size: int) -> None:
        self.ids, self.rows, self.block_size = ids, list(rows), block_size

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> Any:
        start = int(self.rows[index]) * (self.block_size + 1)
        return self.ids[start : start + self.block_size], self.ids[
            start + 1 : start + 1 + self.block_size
        ]


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
