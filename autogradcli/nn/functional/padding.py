"""``pad`` and ``conv_transpose1d/2d`` in torch.nn.functional (the ops live in ``ops/``)."""

from ...ops.conv_transpose import conv_transpose1d, conv_transpose2d
from ...ops.padding import pad

__all__ = ["conv_transpose1d", "conv_transpose2d", "pad"]
