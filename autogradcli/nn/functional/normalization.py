"""Normalization in torch.nn.functional: batch_norm, layer_norm, group_norm, instance_norm.

Built from differentiable Tensor ops (mean, rsqrt, ...), so gradients and grad-of-grad follow
from theirs. Running statistics are updated in place, outside the graph, as PyTorch does:
``running = (1 - momentum) * running + momentum * batch_stat`` with the unbiased batch variance.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...tensor.tensor import Tensor
from .batch_norm_fused import BatchNormEval, BatchNormTrain
from .group_norm_fused import GroupNormFn
from .layer_norm import LayerNormFunction

__all__ = ["batch_norm", "group_norm", "instance_norm", "layer_norm"]


def _normalize(x: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(x - mean) / sqrt(biased var + eps) over ``dims``, with the mean and the biased variance."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    return centered * (var + eps).rsqrt(), mean, var


def _channel_shape(x: Tensor) -> tuple[int, ...]:
    """(1, C, 1, ...): per-channel parameters broadcast over (N, C, *) input."""
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _affine(
    out: Tensor, weight: Tensor | None, bias: Tensor | None, shape: tuple[int, ...] | None = None
) -> Tensor:
    """``out * weight + bias`` (either may be None), both reshaped to ``shape`` when given."""
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
    return out


def _update(running: Tensor, stat: Tensor, momentum: float) -> None:
    arr = running._data
    arr *= 1.0 - momentum
    arr += (stat._data * momentum).astype(arr.dtype, copy=False).reshape(arr.shape)
    running._bump_version()


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of (N, C, *) ``input`` by batch statistics (training) or running ones."""
    if input.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {input.ndim}D input)")
    shape = _channel_shape(input)
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{input.shape}"
            )
        return BatchNormTrain.apply(input, weight, bias, eps, (running_mean, running_var, momentum))
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    if not (running_mean.requires_grad or running_var.requires_grad):
        return BatchNormEval.apply(input, weight, bias, running_mean, running_var, eps)
    mean = running_mean.reshape(shape)  # statistics that need gradients: the composed ops
    out = (input - mean) * (running_var.reshape(shape) + eps).rsqrt()
    return _affine(out, weight, bias, shape)


def layer_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims of ``input``."""
    norm = (
        (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    )
    k = len(norm)
    if k == 0 or tuple(input.shape[input.ndim - k :]) != norm or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(norm)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in norm)}], but got input of size{list(input.shape)}"
        )
    return LayerNormFunction.apply(input, weight, bias, k, float(eps))


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise (N, C, *) ``input`` over each of ``num_groups`` channel groups (and space)."""
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    c = input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={num_groups}"
        )
    if input.numel() == 0:  # nothing to normalize: an empty result, as torch's
        return _affine(input * 1.0, weight, bias, _channel_shape(input))
    return GroupNormFn.apply(input, weight, bias, num_groups, eps)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of each sample of (N, C, *) ``input`` over its spatial dims."""
    shape = _channel_shape(input)
    if use_input_stats:
        dims = tuple(range(2, input.ndim))
        out, mean, var = _normalize(input, dims, eps)
        count = 1
        for s in input.shape[2:]:
            count *= s
        if running_mean is not None:
            _update(running_mean, mean.detach().mean(0), momentum)
        if running_var is not None:
            _update(running_var, (var.detach() * (count / (count - 1))).mean(0), momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined")
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _affine(out, weight, bias, shape)
