"""Optimizers and learning-rate schedulers with PyTorch's ``torch.optim`` API."""

from .._utils.lazy import lazy_attributes
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .sgd import SGD

# loaded on first use: schedulers, L-BFGS with its line search, and the optimizers other than
# SGD, Adam and AdamW (see _utils/lazy.py)
_LAZY = {"LBFGS": ".lbfgs:LBFGS", "lr_scheduler": ".lr_scheduler"}
_LAZY.update(
    ASGD=".asgd:ASGD",
    Adadelta=".adadelta:Adadelta",
    Adagrad=".adagrad:Adagrad",
    Adamax=".adamax:Adamax",
    NAdam=".nadam:NAdam",
    RAdam=".radam:RAdam",
    RMSprop=".rmsprop:RMSprop",
    Rprop=".rprop:Rprop",
)
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
