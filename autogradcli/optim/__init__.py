"""Optimizers and learning-rate schedulers with PyTorch's ``torch.optim`` API."""

from .._utils.lazy import lazy_attributes
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

# loaded on first use: schedulers, and L-BFGS with its line search (see _utils/lazy.py)
_LAZY = {"LBFGS": ".lbfgs:LBFGS", "lr_scheduler": ".lr_scheduler"}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "lr_scheduler",
]
