"""``torch.utils.data.dataset``: the same objects as ``autogradcli.data.dataset``."""

from ...data.dataset import *  # noqa: F403
from ...data.dataset import __all__ as __all__
