"""Learning-rate schedulers with PyTorch's ``torch.optim.lr_scheduler`` API."""

from .base import LRScheduler
from .factors import ConstantLR, MultiplicativeLR, PolynomialLR
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
from .warm_restarts import CosineAnnealingWarmRestarts

_LRScheduler = LRScheduler

__all__ = [
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
