"""The layers a config's ``RNN``/``LSTM``/``GRU``/``TransformerEncoderLayer`` names, and
``PositionalEmbedding``: what a sequence model needs in a layer list, with no glue code.

A layer list passes one tensor from layer to layer. ``nn.LSTM`` returns ``(output, (h, c))``,
so the config's ``LSTM`` (a subclass, the same weights and state-dict names) returns one of its
parts, chosen by ``output``: ``sequence`` (default), the output at every step, or ``last``, the
final step's (for ``bidirectional``, the forward direction's last step and the backward
direction's first: the final hidden states of both, as PyTorch users build them from ``h_n``).
The config's ``TransformerEncoderLayer`` takes ``causal: true`` (each position attends to itself
and earlier ones: a GPT block). The nn classes keep PyTorch's behaviour exactly.
"""

from __future__ import annotations

import inspect
from typing import Any

from .. import nn
from ..nn import init
from ..nn.module import Module
from ..nn.parameter import Parameter
from ..ops import cat
from ..tensor.factory import empty
from ..tensor.tensor import Tensor

__all__ = ["GRU", "LSTM", "OUTPUTS", "RNN", "PositionalEmbedding", "TransformerEncoderLayer"]

OUTPUTS = ("sequence", "last")  # what a config's recurrent layer passes on


class _Recurrent:
    """Mixin over an ``nn`` recurrent layer: ``forward`` returns the part named by ``output``."""

    def __init__(self, *args: Any, output: str = "sequence", **kwargs: Any) -> None:
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {', '.join(OUTPUTS)}, got {output!r}")
        super().__init__(*args, **kwargs)
        self.output = output

    def forward(self, input: Tensor, hx: Any = None) -> Tensor:
        out, _ = super().forward(input, hx)  # type: ignore[misc]
        return out if self.output == "sequence" else self._last_step(out, input.dim() == 2)

    def _last_step(self, out: Tensor, unbatched: bool) -> Tensor:
        """The forward direction's last step, with the backward direction's first step."""
        time = 0 if unbatched or not self.batch_first else 1  # type: ignore[attr-defined]
        last, first = (out[:, -1], out[:, 0]) if time else (out[-1], out[0])
        if not self.bidirectional:  # type: ignore[attr-defined]
            return last
        size = out.shape[-1] // 2
        return cat([last[..., :size], first[..., size:]], dim=-1)

    def extra_repr(self) -> str:
        text = super().extra_repr()  # type: ignore[misc]
        return text if self.output == "sequence" else f"{text}, output={self.output!r}"


class RNN(_Recurrent, nn.RNN):
    """``nn.RNN`` passing on one tensor (``output``: sequence | last)."""


class LSTM(_Recurrent, nn.LSTM):
    """``nn.LSTM`` passing on one tensor (``output``: sequence | last)."""


class GRU(_Recurrent, nn.GRU):
    """``nn.GRU`` passing on one tensor (``output``: sequence | last)."""


class TransformerEncoderLayer(nn.TransformerEncoderLayer):
    """``nn.TransformerEncoderLayer``; with ``causal=True`` each position attends only to
    itself and earlier positions (the square subsequent mask, passed with ``is_causal``)."""

    def __init__(self, *args: Any, causal: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.causal = bool(causal)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        if self.causal and src_mask is None:
            batch_first = self.self_attn.batch_first
            size = src.shape[1 if batch_first and src.dim() == 3 else 0]
            src_mask = nn.Transformer.generate_square_subsequent_mask(
                size, device=src.device, dtype=src.dtype
            )
            is_causal = True
        return super().forward(src, src_mask, src_key_padding_mask, is_causal)


def _signature_plus(base: type, name: str, default: Any) -> inspect.Signature:
    """``base``'s constructor signature (without ``self``) with a keyword-only ``name``, so a
    config's keys are checked against the subclass as against ``base``."""
    params = list(inspect.signature(base).parameters.values())
    extra = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
    return inspect.Signature([*params, extra])


TransformerEncoderLayer.__signature__ = _signature_plus(  # type: ignore[attr-defined]
    nn.TransformerEncoderLayer, "causal", False
)


class PositionalEmbedding(Module):
    """A learned position embedding added to its input (*, T, D): ``x + weight[:T]``, with
    ``weight`` (num_embeddings, embedding_dim) starting N(0, 1) as ``nn.Embedding``'s. Not a
    PyTorch layer: GPT-style models write it by hand; a config names it."""

    def __init__(self, num_embeddings: int, embedding_dim: int) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(empty((num_embeddings, embedding_dim)))
        init.normal_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() < 2 or input.shape[-1] != self.embedding_dim:
            raise ValueError(
                f"expected an input of shape (*, T, {self.embedding_dim}), got {tuple(input.shape)}"
            )
        length = int(input.shape[-2])
        if length > self.num_embeddings:
            raise ValueError(
                f"the input has {length} positions but there are only {self.num_embeddings} "
                "position embeddings: raise num_embeddings to the longest sequence"
            )
        return input + self.weight[:length]

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"
