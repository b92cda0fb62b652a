"""The data sets a config names without a file: ``digits`` (bundled), ``sine`` and
``spirals`` (synthetic, seeded)."""

from __future__ import annotations

from typing import Any

from .arrays import ArrayKind

__all__ = ["DigitsKind", "SineKind", "SpiralsKind"]


class DigitsKind(ArrayKind):
    """The bundled 8x8 handwritten digits: x (N, 1, 8, 8) or (N, 64), y classes 0..9."""

    name = "digits"

    def __init__(self, flatten: bool = False) -> None:
        self.flatten = flatten

    def load(self) -> Any:
        from ..files import load_digits

        return load_digits(flatten=self.flatten)


class SineKind(ArrayKind):
    """``y = sin(x) + noise``: a seeded regression set (``seed`` null: the run's seed)."""

    name = "sine"

    def __init__(self, n: int = 200, noise: float = 0.0, seed: int | None = None) -> None:
        self.n, self.noise, self.seed = n, noise, seed

    def load(self) -> Any:
        from ..synthetic import sine_regression

        return sine_regression(self.n, self.noise, self.seed or 0)


class SpiralsKind(ArrayKind):
    """Interleaved 2-D spiral arms, ``classes`` of them (``seed`` null: the run's seed)."""

    name = "spirals"

    def __init__(
        self, n_per_class: int = 100, classes: int = 3, noise: float = 0.2, seed: int | None = None
    ) -> None:
        self.n_per_class, self.classes, self.noise, self.seed = n_per_class, classes, noise, seed

    def load(self) -> Any:
        from ..synthetic import spirals

        return spirals(self.n_per_class, self.classes, self.noise, self.seed or 0)
