"""``torch.backends``: switches of the compute libraries (``cudnn``, ``cuda``, ``mps``,
``opt_einsum``). autogradcli uses none of those libraries, so the switches are kept and read back
but change nothing, and the availability queries answer as PyTorch does without them."""

from . import cuda, cudnn, mps, opt_einsum

__all__ = ["cuda", "cudnn", "mps", "opt_einsum"]
