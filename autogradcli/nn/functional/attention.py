"""Attention in torch.nn.functional: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (what ``nn.MultiheadAttention`` runs), as torch computes them.

Built from differentiable Tensor ops (matmul, softmax, masked_fill, ...), so gradients and
grad-of-grad follow from theirs.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ...ops.join import cat
from ...ops.linalg import matmul
from ...ops.padding import pad
from ...tensor.factory import ones, zeros
from ...tensor.tensor import Tensor
from .activation import softmax
from .linear import dropout, linear
from .sdpa import SDPA

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")


def _torch_dtype_name(t: Tensor) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half"}.get(
        str(t.dtype).split(".")[-1], str(t.dtype).split(".")[-1]
    )


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim with rows that are all -inf giving zeros (torch's
    ``_safe_softmax``), with no NaN reaching the gradient either."""
    dead = (scores == _NEG_INF).all(-1, keepdim=True)
    if not bool(dead.any()):
        return softmax(scores, -1)
    return softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)


def _fusable(query: Tensor, key: Tensor, attn_mask: Tensor | None) -> bool:
    """Whether the one-Function SDPA applies: float inputs of >= 2 dims, and a mask (if any)
    that broadcasts to the scores' shape without enlarging it and needs no gradient."""
    if query.ndim < 2 or key.ndim < 2 or query._data.dtype.kind not in "fV":
        return False
    if attn_mask is None:
        return True
    scores = (*query.shape[:-1], key.shape[-2])
    if len(scores) < attn_mask.ndim or attn_mask.requires_grad:
        return False
    return all(m in (1, s) for s, m in zip(scores[::-1], attn_mask.shape[::-1]))


def _repeat_heads(t: Tensor, times: int) -> Tensor:
    """(..., Hk, S, E) -> (..., Hk * times, S, E), each head repeated ``times`` in a row."""
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], times, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * times, *shape[-2:])


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(Q K^T * scale + mask) V over (..., L, E) queries and (..., S, E) keys.

    A bool ``attn_mask`` marks the pairs that may attend (True = take part); a float mask is
    added to the scores. Rows no key may attend give zeros, as torch's."""
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_torch_dtype_name(query)} key.dtype: {_torch_dtype_name(key)} and value.dtype: "
            f"{_torch_dtype_name(value)} instead."
        )
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        times = query.shape[-3] // key.shape[-3]
        key, value = _repeat_heads(key, times), _repeat_heads(value, times)
    length, source = query.shape[-2], key.shape[-2]
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if _fusable(query, key, attn_mask):
        return SDPA.apply(query, key, value, attn_mask, bool(is_causal), float(dropout_p), factor)
    scores = matmul(query, key.transpose(-2, -1)) * factor
    masked = False
    if is_causal:
        allowed = ones(length, source, dtype="bool", device=query.device).tril()
        scores = scores.masked_fill(allowed.logical_not(), _NEG_INF)
        masked = True
    if attn_mask is not None:
        if str(attn_mask.dtype).endswith("bool"):
            scores = scores.masked_fill(attn_mask.logical_not(), _NEG_INF)
        else:
            scores = scores + attn_mask
        masked = True
    weights = _safe_softmax(scores) if masked else softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return matmul(weights, value)


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A bool mask (True = masked out) as a float mask of 0 and -inf; float masks unchanged."""
    if mask is None:
        return None
    is_bool = str(mask.dtype).endswith("bool")
    if not is_bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} "
            "is deprecated. Use same type for both instead.",
            stacklevel=3,
        )
    if is_bool:
        return zeros(*mask.shape, dtype=target_type, device=mask.device).masked_fill(mask, _NEG_INF)
    return mask


def _shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """torch's checks of the ranks; whether the input is batched."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                f" but found {key.ndim}-D and {value.ndim}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                f" but found {key_padding_mask.ndim}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.ndim}-D tensor instead"
            )
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                f" but found {key.ndim}-D and {value.ndim}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                f" but found {key_padding_mask.ndim}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                    f" but found {attn_mask.ndim}-D tensor instead"
                )
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                )
        return False
    raise AssertionError(
        "query should be unbatched 2D or batched 3D tensor but received "
        f"{query.ndim}-D query tensor"
    )


def _project(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    separate: tuple[Tensor | None, Tensor | None, Tensor | None] | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """The q, k, v input projections: rows [0:E], [E:2E], [2E:3E] of the packed weight."""
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias.chunk(3)
    if separate is None:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        wq, wk, wv = in_proj_weight.chunk(3)
    else:
        for name, w in zip(("q", "k", "v"), separate):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        wq, wk, wv = separate
    return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over sequence-first (L, N, E) or unbatched (L, E) inputs."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError(
            "multi_head_attention_forward: static_k/static_v are not supported"
        )
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask,
        "key_padding_mask",
        None if attn_mask is None else attn_mask.dtype,
        "attn_mask",
        query.dtype,
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. "
            "You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias, separate)

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        blank = zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k, v = cat([k, blank], 1), cat([v, blank], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        kpm = (
            key_padding_mask.reshape(bsz, 1, 1, src_len)
            .expand(-1, num_heads, -1, -1)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        scores = matmul(q_scaled, k.transpose(-2, -1))
        if attn_mask is not None:
            scores = attn_mask + scores
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = matmul(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
    return out, None
