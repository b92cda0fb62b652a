"""``torch.backends``: switches of the compute libraries; here only ``cudnn``'s flags, which
programs set and read (autogradcli does not use cuDNN, so they change nothing)."""

from . import cudnn

__all__ = ["cudnn"]
