"""Neural-network building blocks with PyTorch's ``torch.nn`` API."""

from . import functional, init, modules, parallel, utils
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
