"""Neural-network building blocks with PyTorch's ``torch.nn`` API."""

from .._utils.lazy import lazy_attributes
from . import functional, init, modules, utils
from .activation import *
from .attention import *
from .channel_dropout import *
from .container import *
from .conv import *
from .conv_transpose import *
from .dropout import *
from .flatten import *
from .function_layer import *
from .instancenorm import *
from .linear import *
from .loss import *
from .module import *
from .normalization import *
from .padding import *
from .parameter import *
from .pooling import *
from .rnn import *
from .sparse import *
from .squeeze import *
from .sync_batchnorm import *
from .transformer import *
from .transformer_layers import *
from .upsampling import *
from .vision import *

# loaded on first use: only data-parallel programs need it (see _utils/lazy.py)
_LAZY = {"parallel": ".parallel", "DataParallel": ".parallel.data_parallel:DataParallel"}
_LAZY.update(  # the lazy layers (nn/lazy.py), loaded by the programs that use them
    {name: f".lazy:{name}" for name in ("LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d")}
    | {f"LazyBatchNorm{n}d": f".lazy:LazyBatchNorm{n}d" for n in (1, 2, 3)}
)
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
