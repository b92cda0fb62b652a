"""``autogradcli.testing``: PyTorch's ``torch.testing.assert_close``, same tolerances and messages
(and the deprecated ``assert_allclose``)."""

from .allclose import assert_allclose
from .close import assert_close

__all__ = ["assert_allclose", "assert_close"]
