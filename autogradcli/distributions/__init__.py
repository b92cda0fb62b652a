"""``torch.distributions``: probability distributions to sample from and score
(``Categorical``, ``Normal``, ``Bernoulli``), with PyTorch's parameters, shapes and formulas."""

from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal"]
