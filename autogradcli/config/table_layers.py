"""``TableEmbeddings``: the config layer that feeds a table's ``encode: embedding`` columns to
embeddings, so a layer list can use them with no glue code.

The table kind puts each such column in one float32 input slot holding its category's index
(0: a value training never saw, then the vocabulary from 1). This layer takes those slots off
the input, looks each up in its own ``nn.Embedding`` (one per column, the index cast to int64)
and concatenates the embeddings, in column order, before the remaining numeric and one-hot
slots (fastai's tabular model's order), so ``Linear(in_features: auto)`` follows it. Which
slots and their vocabulary sizes come from the kind's fitted state (``sizes(state)``'s
``embeddings``), which a run stores in ``data_state.json``: eval and predict rebuild it.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..nn.container import ModuleList
from ..nn.module import Module
from ..nn.sparse import Embedding
from ..ops import cat
from ..tensor.tensor import Tensor

__all__ = ["MAX_AUTO_DIM", "TableEmbeddings", "auto_embedding_dim"]

MAX_AUTO_DIM = 50  # the largest width ``embedding_dim: auto`` gives a column


def auto_embedding_dim(num_embeddings: int) -> int:
    """The fast.ai course's rule of thumb: half the rows (rounded up), at most 50."""
    return min(MAX_AUTO_DIM, (num_embeddings + 1) // 2)


class TableEmbeddings(Module):
    """Embed the table's index slots (one ``Embedding`` per ``encode: embedding`` column) and
    pass ``cat([embeddings..., other slots], -1)`` on. ``layout`` (from the data, not the
    config): ``{"width": input slots, "columns": [{"name", "slot", "num_embeddings"}...]}``."""

    data_layout = "embeddings"  # the key of the data kind's ``sizes`` the builder passes
    data_layout_needs = (
        "`encode: embedding` column to embed: declare one in data.columns "
        "(`island: {type: category, encode: embedding}`), or remove this layer"
    )
    auto_settings = ("embedding_dim",)  # ``auto`` here is this layer's own rule

    def __init__(self, embedding_dim: int | str = "auto", *, layout: dict[str, Any]) -> None:
        super().__init__()
        columns = list(layout["columns"])
        if not columns:
            raise ValueError("the data has no `encode: embedding` column to embed")
        if embedding_dim != "auto" and (
            isinstance(embedding_dim, bool) or not isinstance(embedding_dim, int)
        ):
            raise ValueError(
                f"embedding_dim must be a positive int or 'auto', got {embedding_dim!r}"
            )
        if embedding_dim != "auto" and embedding_dim < 1:
            raise ValueError(f"embedding_dim must be a positive int or 'auto', got {embedding_dim}")
        self.width = int(layout["width"])
        self.names = [str(c["name"]) for c in columns]
        self.slots = [int(c["slot"]) for c in columns]
        self.embedding_dim = embedding_dim
        self.embeddings = ModuleList(
            Embedding(
                int(c["num_embeddings"]),
                auto_embedding_dim(int(c["num_embeddings"]))
                if embedding_dim == "auto"
                else int(embedding_dim),
            )
            for c in columns
        )
        self._rest = _runs(sorted(self.slots), self.width)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() < 1 or input.shape[-1] != self.width:
            raise ValueError(
                f"expected the table's {self.width} input slots, shape (*, {self.width}), got "
                f"{tuple(input.shape)}: TableEmbeddings reads the table's inputs, so it goes "
                "first in the layer list"
            )
        parts = [emb(input[..., slot].long()) for emb, slot in zip(self.embeddings, self.slots)]
        parts += [input[..., start:stop] for start, stop in self._rest]
        return cat(parts, dim=-1)

    def extra_repr(self) -> str:
        return f"columns={self.names}, slots={self.slots}, width={self.width}"


def _runs(taken: list[int], width: int) -> list[tuple[int, int]]:
    """The [start, stop) ranges of slots 0..width-1 not in ``taken`` (sorted)."""
    runs, start = [], 0
    for slot in [*taken, width]:
        if slot > start:
            runs.append((start, slot))
        start = slot + 1
    return runs


# A config sets only ``embedding_dim``; ``layout`` comes from the data (see ``data_layout``).
TableEmbeddings.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("embedding_dim", inspect.Parameter.POSITIONAL_OR_KEYWORD, default="auto")]
)
