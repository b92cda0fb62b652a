"""``nn.MultiheadAttention``: torch's parameters (a packed ``in_proj_weight`` (3E, E), or
separate q/k/v weights when kdim/vdim differ), initialisation, state_dict names and forward.
As ``torch.nn.attention`` this module also holds ``SDPBackend`` and ``sdpa_kernel``."""

from __future__ import annotations

from typing import Any

from ..tensor.factory import empty
from ..tensor.tensor import Tensor
from . import init
from .functional.attention import multi_head_attention_forward
from .linear import Linear
from .module import Module
from .parameter import Parameter
from .sdpa_backends import SDPBackend, sdpa_kernel

__all__ = ["MultiheadAttention", "SDPBackend", "sdpa_kernel"]


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under torch's name for ``MultiheadAttention.out_proj`` (same repr)."""


class MultiheadAttention(Module):
    """Attention from ``num_heads`` heads of size ``embed_dim // num_heads``, concatenated and
    projected by ``out_proj``. Inputs are (L, N, E), or (N, L, E) with ``batch_first``."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                "embed_dim and num_heads must be greater than 0,"
                f" got embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """xavier_uniform_ projections, zero biases, xavier_normal_ bias_k/bias_v, as torch."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """(attention output, attention weights or None); see torch's MultiheadAttention."""
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights
