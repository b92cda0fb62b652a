"""Learning-rate schedulers with PyTorch's ``torch.optim.lr_scheduler`` API."""

from .base import LRScheduler
from .one_cycle import OneCycleLR
from .plateau import ReduceLROnPlateau
from .schedules import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiStepLR,
    StepLR,
)
from .sequential import SequentialLR

_LRScheduler = LRScheduler

__all__ = [
    "CosineAnnealingLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "OneCycleLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
