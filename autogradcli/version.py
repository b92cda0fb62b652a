"""``torch.version``: the package version, and the CUDA runtime cupy uses (None without cupy, as
PyTorch's CPU build reports)."""

from __future__ import annotations

from ._version import __version__

__all__ = ["__version__", "cuda", "debug", "git_version", "hip"]


def _cuda_version() -> str | None:
    try:
        import cupy

        v = int(cupy.cuda.runtime.runtimeGetVersion())
    except Exception:  # no cupy, or no CUDA runtime: the CPU build's answer
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


cuda = _cuda_version()
hip = None
debug = False
git_version = "Unknown"
