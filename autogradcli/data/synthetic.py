"""Small synthetic datasets for demos and tests, deterministic for a given seed.

They draw from their own ``numpy`` generator seeded by ``seed``, never from the global RNG, so
building a dataset does not change the random stream of training.
"""

from __future__ import annotations

import numpy as np

from ..tensor.tensor import wrap
from .dataset import TensorDataset


def sine_regression(n: int = 200, noise: float = 0.0, seed: int = 0) -> TensorDataset:
    """``x`` (n, 1) uniform in [-pi, pi] and ``y = sin(x) + noise * N(0, 1)`` (n, 1), float32."""
    if n <= 0:
        raise ValueError(f"sine_regression needs n > 0, got {n}")
    rng = np.random.default_rng(seed)
    x = rng.uniform(-np.pi, np.pi, size=(n, 1))
    y = np.sin(x) + noise * rng.standard_normal((n, 1))
    return TensorDataset(wrap(x.astype(np.float32)), wrap(y.astype(np.float32)))


def spirals(
    n_per_class: int = 100, classes: int = 3, noise: float = 0.2, seed: int = 0
) -> TensorDataset:
    """Interleaved 2-D spiral arms (CS231n's toy problem): points (n_per_class * classes, 2)
    float32 within about [-1, 1], labels int64 in ``range(classes)``, grouped by class."""
    if n_per_class <= 0 or classes <= 0:
        raise ValueError(
            f"spirals needs n_per_class > 0 and classes > 0, got {n_per_class}, {classes}"
        )
    rng = np.random.default_rng(seed)
    radius = np.linspace(0.0, 1.0, n_per_class)
    points, labels = [], []
    for c in range(classes):
        theta = np.linspace(c * 4.0, (c + 1) * 4.0, n_per_class)
        theta = theta + noise * rng.standard_normal(n_per_class)
        points.append(np.stack([radius * np.sin(theta), radius * np.cos(theta)], axis=1))
        labels.append(np.full(n_per_class, c, dtype=np.int64))
    x = np.concatenate(points).astype(np.float32)
    return TensorDataset(wrap(x), wrap(np.concatenate(labels)))
