"""``torch.utils.data`` under its PyTorch name: everything ``autogradcli.data`` provides."""

from ...data import *
from ...data import __all__ as __all__
from . import dataloader, dataset, distributed, sampler
