"""The functional forms of the layers and losses (``torch.nn.functional``)."""

from ..._utils.lazy import lazy_attributes, star_names
from .activation import *
from .channel_dropout import *
from .conv import *
from .linear import *
from .loss import *
from .normalization import *
from .padding import *
from .pooling import *

# functions an MLP or CNN step never calls, loaded with the first use of one of their names (each
# module's __all__; tests/test_lazy_imports.py checks the lists against it)
LAZY_FUNCTIONS = {
    "attention": ["multi_head_attention_forward", "scaled_dot_product_attention"],
    "sampling": ["affine_grid", "grid_sample"],
    "upsampling": ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"],
    "vision": [
        "cosine_similarity",
        "normalize",
        "pairwise_distance",
        "pixel_shuffle",
        "pixel_unshuffle",
        "rms_norm",
    ],
}
_LAZY = {name: f".{module}:{name}" for module, names in LAZY_FUNCTIONS.items() for name in names}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
__all__ = star_names(globals(), _LAZY)  # `from ...nn import *` has the lazy names too
