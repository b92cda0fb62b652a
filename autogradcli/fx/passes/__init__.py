"""``torch.fx.passes``: analyses over a GraphModule (``shape_prop.ShapeProp``)."""

from . import shape_prop

__all__ = ["shape_prop"]
