"""``torch.utils.data.sampler``: the same objects as ``autogradcli.data.sampler``."""

from ...data.sampler import *  # noqa: F403
from ...data.sampler import __all__ as __all__
