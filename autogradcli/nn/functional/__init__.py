"""The functional forms of the layers and losses (``torch.nn.functional``)."""

from .activation import *
from .attention import *
from .channel_dropout import *
from .conv import *
from .linear import *
from .loss import *
from .normalization import *
from .padding import *
from .pooling import *
from .sampling import *
from .upsampling import *
from .vision import *
