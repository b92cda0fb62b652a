"""``torch.backends``: switches of the compute libraries (``cudnn``, ``cuda``, ``mps``,
``opt_einsum``). autogradcli uses none of those libraries but cuDNN (through cupy), so the
switches are kept and read back, and the availability queries answer as PyTorch does without
them. Each submodule loads on first access (see _utils/lazy.py)."""

from .._utils.lazy import lazy_attributes

_LAZY: dict[str, str] = {}  # the submodules are attributes through the helper's fallback
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = ["cuda", "cudnn", "mps", "opt_einsum"]
