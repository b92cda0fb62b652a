"""``autogradcli.testing``: PyTorch's ``torch.testing.assert_close``, same tolerances and messages."""

from .close import assert_close

__all__ = ["assert_close"]
