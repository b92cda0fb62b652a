"""``torch.utils.data.dataloader``: the same objects as ``autogradcli.data.dataloader``."""

from ...data.dataloader import *  # noqa: F403
from ...data.dataloader import __all__ as __all__
