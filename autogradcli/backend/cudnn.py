"""cuDNN through cupy (``cupyx.cudnn``), loaded on first use: the library module, or None where
cupy cannot load cuDNN (then device convolutions take the im2col path)."""

from __future__ import annotations

from typing import Any

__all__ = ["load_cudnn"]

_LOADED: list[Any] = []  # [module or None] once tried


def _preload_wheel_cudnn() -> None:
    """Load the ``nvidia-cudnn-cu*`` wheel's library (where PyTorch's CUDA wheels put cuDNN)
    into the process, so cupy, which looks on the system's library path, finds it loaded."""
    import ctypes
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("nvidia.cudnn")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        for lib in sorted(Path(folder, "lib").glob("libcudnn.so*")):
            ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
            return


def _try() -> Any:
    import cupyx.cudnn as mod
    from cupy.cuda import cudnn

    cudnn.getVersion()
    return mod


def load_cudnn() -> Any:
    """``cupyx.cudnn`` when cuDNN loads beside cupy (from the system, or else from a pip
    wheel), else None; tried once per process."""
    if not _LOADED:
        try:
            mod = _try()
        except Exception:  # not on the library path: the wheel's, if there is one
            try:
                _preload_wheel_cudnn()
                mod = _try()
            except Exception:  # no cupy, no GPU library or no cuDNN: the im2col path
                mod = None
        _LOADED.append(mod)
    return _LOADED[0]
