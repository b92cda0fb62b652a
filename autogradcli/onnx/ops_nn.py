"""ONNX converters of the layers' ops: linear, embedding, normalization, convolution, pooling and
attention."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend.registry import to_numpy
from ..nn.functional.batch_norm_fused import BatchNormEval, BatchNormTrain
from ..nn.functional.group_norm_fused import GroupNormFn
from ..nn.functional.layer_norm import LayerNormFunction
from ..nn.functional.linear import Linear, _Dropout, _Embedding
from ..nn.functional.sdpa import SDPA
from ..ops import pooling
from ..ops.convolution import Convolution
from ..ops.im2col import Col2Im
from .convert import Node
from .errors import OnnxExporterError
from .graph import GraphContext
from .registry import converter, refuse


@converter(Linear)
def _linear(g: GraphContext, node: Node) -> Any:
    x, w, b = node.args
    if x.dim() == 2 and b is not None:
        return g.op("Gemm", x, w, b, transB=1)
    out = g.op("MatMul", x, g.op("Transpose", w, perm=[1, 0]))
    return out if b is None else g.op("Add", out, b)


@converter(_Embedding)
def _embedding(g: GraphContext, node: Node) -> Any:
    weight, indices = node.args[:2]
    return g.op("Gather", weight, g.cast(indices, np.int64), axis=0)


@converter(LayerNormFunction)
def _layer_norm(g: GraphContext, node: Node) -> Any:
    x, weight, bias, k, eps = node.args
    shape = x.shape[x.dim() - k :]
    if weight is None:
        weight = g.const(np.ones(shape), x.dtype)
    return g.op("LayerNormalization", x, weight, bias, axis=-int(k), epsilon=float(eps))


@converter(GroupNormFn)
def _group_norm(g: GraphContext, node: Node) -> Any:
    x, weight, bias, groups, eps = node.args
    rows = g.op("Reshape", x, g.ints([0, groups, -1]))  # (N, G, rest)
    dev = g.op("Sub", rows, g.reduce("ReduceMean", rows, [2], True))
    var = g.reduce("ReduceMean", g.op("Mul", dev, dev), [2], True)
    y = g.op("Div", dev, g.op("Sqrt", g.op("Add", var, g.const(eps, x.dtype))))
    y = g.op("Reshape", y, g.op("Shape", x))
    per_channel = [x.shape[1]] + [1] * (x.dim() - 2)
    if weight is not None:
        y = g.op("Mul", y, g.op("Reshape", weight, g.ints(per_channel)))
    if bias is not None:
        y = g.op("Add", y, g.op("Reshape", bias, g.ints(per_channel)))
    return y


@converter(BatchNormEval)
def _batch_norm(g: GraphContext, node: Node) -> Any:
    x, weight, bias, mean, var, eps = node.args
    c = x.shape[1]
    weight = weight if weight is not None else g.const(np.ones(c), x.dtype)
    bias = bias if bias is not None else g.const(np.zeros(c), x.dtype)
    return g.op("BatchNormalization", x, weight, bias, mean, var, epsilon=float(eps))


_TRAINING_ONLY = (
    "in training mode has no deterministic ONNX form: export in eval mode "
    "(training=TrainingMode.EVAL, the default)"
)
refuse(_Dropout, f"Dropout {_TRAINING_ONLY}")
refuse(BatchNormTrain, f"BatchNorm (batch statistics) {_TRAINING_ONLY}")


@converter(Convolution)
def _conv(g: GraphContext, node: Node) -> Any:
    x, w, b, stride, pad, dilation, groups = node.args
    top, bottom, left, right = pad
    return g.op(
        "Conv", x, w, b, kernel_shape=list(w.shape[2:]), strides=list(stride),
        pads=[top, left, bottom, right], dilations=list(dilation), group=int(groups),
    )  # fmt: skip


@converter(pooling.MaxPool2d, dynamic_args=(1,))
def _max_pool(g: GraphContext, node: Node) -> Any:
    x, geo, return_indices = node.args
    top, bottom, left, right = geo.pad
    outputs = 2 if return_indices else 1
    out = g.op(
        "MaxPool", x, kernel_shape=list(geo.kernel), strides=list(geo.stride),
        pads=[top, left, bottom, right], dilations=list(geo.dilation), outputs=outputs,
    )  # fmt: skip
    if not return_indices:
        return out
    values, flat = out  # ONNX's indices count over N, C too; PyTorch's within each plane
    plane = g.op("Mul", g.op("Shape", x, start=2, end=3), g.op("Shape", x, start=3, end=4))
    return values, g.op("Mod", flat, plane)


@converter(pooling.AvgPool2d, dynamic_args=(1,))
def _avg_pool(g: GraphContext, node: Node) -> Any:
    """Window sums as a depthwise Conv with a kernel of ones (any dilation, the padding counted
    as zeros), divided by the engine's divisor (one number, or one per output position)."""
    x, geo, divisor = node.args
    c = geo.shape[1]
    top, bottom, left, right = geo.pad
    ones = g.const(np.ones((c, 1, *geo.kernel)), x.dtype)
    sums = g.op(
        "Conv", x, ones, kernel_shape=list(geo.kernel), strides=list(geo.stride),
        pads=[top, left, bottom, right], dilations=list(geo.dilation), group=int(c),
    )  # fmt: skip
    return g.op(
        "Div", sums, g.const(to_numpy(divisor) if hasattr(divisor, "dtype") else divisor, x.dtype)
    )


@converter(Col2Im, dynamic_args=(1,))
def _col2im(g: GraphContext, node: Node) -> Any:
    """Columns (C*kh*kw, N*Ho*Wo) summed into (N, C, H, W): a ConvTranspose with a one-hot
    kernel per channel (each column row lands at its kernel offset), then the padding cropped."""
    cols, shape, kernel, stride, pad, dilation = node.args
    _, c, h, w = shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    top, bottom, left, right = pad
    ho = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    wo = (w + left + right - dw * (kw - 1) - 1) // sw + 1
    k = kh * kw
    x = g.op("Reshape", cols, g.ints([c * k, -1, ho, wo]))
    x = g.op("Transpose", x, perm=[1, 0, 2, 3])
    eye = np.zeros((c * k, 1, kh, kw))
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                eye[ch * k + i * kw + j, 0, i, j] = 1.0
    full = g.op(
        "ConvTranspose", x, g.const(eye, cols.dtype), kernel_shape=[kh, kw], strides=[sh, sw],
        dilations=[dh, dw], group=int(c),
    )  # fmt: skip
    full_h, full_w = (ho - 1) * sh + dh * (kh - 1) + 1, (wo - 1) * sw + dw * (kw - 1) + 1
    need_h, need_w = top + h - full_h, left + w - full_w
    if need_h > 0 or need_w > 0:
        pads = [0, 0, 0, 0, 0, 0, max(0, need_h), max(0, need_w)]
        full = g.op("Pad", full, g.ints(pads), g.const(0, cols.dtype))
    return g.op("Slice", full, g.ints([top, left]), g.ints([top + h, left + w]), g.ints([2, 3]))


@converter(SDPA)
def _sdpa(g: GraphContext, node: Node) -> Any:
    q, k, v, mask, causal, p, scale = node.args
    if p > 0.0:
        raise OnnxExporterError(
            "scaled_dot_product_attention with dropout_p > 0 is random: export in eval mode "
            "(dropout_p=0)"
        )
    kt = g.op("Transpose", k, perm=[*range(k.dim() - 2), k.dim() - 1, k.dim() - 2])
    s = g.op("Mul", g.op("MatMul", q, kt), g.const(scale, q.dtype))
    dead_rows = False
    if causal or (mask is not None and mask.dtype == np.bool_):
        neg = g.const(-np.inf, q.dtype)
    if causal:
        sizes = g.op("Shape", s, start=-2)
        ones = g.op("ConstantOfShape", sizes, value=np.ones(1, np.int64))
        keep = g.cast(g.op("Trilu", ones, upper=0), np.bool_)
        s = g.op("Where", keep, s, neg)
    elif mask is not None:
        if mask.dtype == np.bool_:
            s, dead_rows = g.op("Where", mask, s, neg), True
        else:
            s = g.op("Add", s, g.cast(mask, q.dtype))
    weights = g.op("Softmax", s, axis=-1)
    if dead_rows:  # a row with every key masked: the engine gives zeros, Softmax NaN
        weights = g.op("Where", g.op("IsNaN", weights), g.const(0, q.dtype), weights)
    return g.op("MatMul", weights, v)
