"""``torch.backends.cudnn``: the flags programs set. 2-D convolutions on a GPU run through
cuDNN when cupy can load it (ops/convolution_cudnn.py), reading ``enabled`` (off: the im2col
path), ``benchmark`` (cuDNN times its algorithms) and ``deterministic``; ``allow_tf32`` is kept
and read back (cupy computes float32 convolutions in float32)."""

from __future__ import annotations

from ..backend.cudnn import load_cudnn

benchmark: bool = False
deterministic: bool = False
enabled: bool = True
allow_tf32: bool = True


def version() -> int | None:
    """cuDNN's version as cupy loads it (e.g. 91000), or None without cupy or cuDNN."""
    if load_cudnn() is None:
        return None
    from cupy.cuda import cudnn

    return int(cudnn.getVersion())


def is_available() -> bool:
    """Whether cupy can load cuDNN here."""
    return version() is not None
