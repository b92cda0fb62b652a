"""Neural-network building blocks with PyTorch's ``torch.nn`` API."""

from . import functional, init, parallel, utils
from .activation import *
from .container import *
from .conv import *
from .dropout import *
from .flatten import *
from .function_layer import *
from .linear import *
from .loss import *
from .module import *
from .normalization import *
from .parameter import *
from .pooling import *
from .rnn import *
from .sparse import *
from .sync_batchnorm import *
