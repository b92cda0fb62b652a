"""2-D convolution on a GPU through cuDNN (``cupyx.cudnn``), as PyTorch and Chainer run it.

On cupy the im2col path is a dozen launches and a (C*kh*kw, N*H*W) column buffer per conv; cuDNN
runs each of forward, input gradient and weight gradient as one library call. ``cudnn_for(arr)``
says whether a device array gets it: real cupy with cuDNN loadable (a stand-in supplies its own
as ``xp._cudnn``) and ``autogradcli.backends.cudnn.enabled``. The flags are torch's:
``benchmark`` lets cuDNN time its algorithms (``auto_tune``), ``deterministic`` (or
``use_deterministic_algorithms``) keeps to deterministic ones. Float32 is computed in float32:
cupy uses tensor cores for float16 only. The numpy path (ops/convolution.py) is the reference;
grad-of-grad keeps the Function-built backward there.
"""

from __future__ import annotations

from typing import Any

from ..backend import array_module
from ..backend.cudnn import load_cudnn

__all__ = ["backward", "cudnn_for", "forward"]


def cudnn_for(arr: Any, weight: Any, pad: tuple) -> Any:
    """The cuDNN module for a convolution of device array ``arr`` (4-D, float, padding the same
    on both sides of each dim), or None."""
    if arr.ndim != 4 or arr.dtype.char not in "efd":
        return None
    from .. import backends  # loaded on first use: only device arrays come here

    if not backends.cudnn.enabled:
        return None
    if pad[0] != pad[1] or pad[2] != pad[3] or weight.dtype != arr.dtype:
        return None
    xp = array_module(arr)
    if getattr(xp, "__name__", "") != "cupy":
        return getattr(xp, "_cudnn", None)  # a stand-in's, in tests
    return load_cudnn()


def _modes() -> dict[str, Any]:
    from .. import backends, deterministic

    det = backends.cudnn.deterministic or deterministic.are_deterministic_algorithms_enabled()
    return {"deterministic": det, "auto_tune": backends.cudnn.benchmark and not det}


def forward(cudnn: Any, x: Any, w: Any, b: Any, out_hw: tuple, geometry: tuple) -> Any:
    """(N, O, Ho, Wo) = conv(x, w) + b, in one cuDNN call."""
    stride, pad, dilation, groups = geometry
    xp = array_module(x)
    y = xp.empty((x.shape[0], w.shape[0], *out_hw), dtype=x.dtype)
    modes = _modes()
    cudnn.convolution_forward(
        xp.ascontiguousarray(x), xp.ascontiguousarray(w), b, y,
        (pad[0], pad[2]), tuple(stride), tuple(dilation), groups,
        auto_tune=modes["auto_tune"], tensor_core="auto",
    )  # fmt: skip
    return y


def backward(
    cudnn: Any, x: Any, w: Any, g: Any, geometry: tuple, nx: bool, nw: bool
) -> tuple[Any, Any]:
    """The input and weight gradients (None where not needed), one cuDNN call each."""
    stride, pad, dilation, groups = geometry
    xp = array_module(x)
    g = xp.ascontiguousarray(g)
    args = ((pad[0], pad[2]), tuple(stride), tuple(dilation), groups)
    kw = dict(_modes(), tensor_core="auto")
    gx = gw = None
    if nx:
        gx = xp.empty(x.shape, dtype=x.dtype)
        cudnn.convolution_backward_data(xp.ascontiguousarray(w), g, None, gx, *args, **kw)
    if nw:
        gw = xp.empty(w.shape, dtype=w.dtype)
        cudnn.convolution_backward_filter(xp.ascontiguousarray(x), g, gw, *args, **kw)
    return gx, gw
