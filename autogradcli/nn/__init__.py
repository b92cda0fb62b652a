"""Neural-network building blocks with PyTorch's ``torch.nn`` API."""

from .._utils.lazy import lazy_attributes, star_names
from . import functional, init, utils
from .activation import *
from .container import *
from .conv import *
from .conv_transpose import *
from .dropout import *
from .flatten import *
from .linear import *
from .loss import *
from .module import *
from .normalization import *
from .parameter import *
from .pooling import *
from .sparse import *

# loaded on first use: only data-parallel programs need it (see _utils/lazy.py)
_LAZY = {"parallel": ".parallel", "DataParallel": ".parallel.data_parallel:DataParallel"}
# layers an MLP or a CNN step never builds, loaded with the first use of one of their names (each
# module's __all__; tests/test_lazy_imports.py checks the lists against it)
LAZY_LAYERS = {
    "attention": ["MultiheadAttention", "SDPBackend", "sdpa_kernel"],
    "channel_dropout": ["Dropout1d", "Dropout2d", "Dropout3d"],
    "function_layer": ["FunctionLayer", "init_tensor"],
    "instancenorm": ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"],
    "padding": [
        f"{kind}Pad{n}d"
        for kind in ("Circular", "Constant", "Reflection", "Replication", "Zero")
        for n in (1, 2, 3)
    ],
    "rnn": ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"],
    "squeeze": ["Squeeze", "Unsqueeze"],
    "sync_batchnorm": ["SyncBatchNorm"],
    "transformer": ["Transformer", "TransformerDecoder", "TransformerEncoder"],
    "transformer_layers": ["TransformerDecoderLayer", "TransformerEncoderLayer"],
    "upsampling": ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"],
    "vision": [
        "CosineSimilarity",
        "Fold",
        "PairwiseDistance",
        "PixelShuffle",
        "PixelUnshuffle",
        "RMSNorm",
        "Unfold",
    ],
}
_LAZY.update({name: f".{module}:{name}" for module, names in LAZY_LAYERS.items() for name in names})
_LAZY.update(  # the lazy layers (nn/lazy.py), loaded by the programs that use them
    {name: f".lazy:{name}" for name in ("LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d")}
    | {f"LazyBatchNorm{n}d": f".lazy:LazyBatchNorm{n}d" for n in (1, 2, 3)}
)
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
__all__ = star_names(globals(), _LAZY)  # `from ...nn import *` has the lazy names too
