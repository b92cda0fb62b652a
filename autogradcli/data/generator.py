"""``Generator``: a seedable random source for data order, with its state as plain data."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import as_device
from ..tensor.random import DEFAULT_SEED, generator_for


class Generator:
    """A PCG64 random generator for shuffling and splitting (PyTorch's ``torch.Generator``).

    ``get_state()`` returns plain data (ints and strings, safe for ``autogradcli.save``), so a
    trainer can checkpoint the data order and resume it exactly with ``set_state``.
    """

    def __init__(self, device: Any = None, seed: int | None = None) -> None:
        """``Generator(device='cpu')`` as in PyTorch; an int first argument is the seed
        (``Generator(0)``, this project's own spelling)."""
        if isinstance(device, (int, np.integer)) and not isinstance(device, bool):
            device, seed = None, int(device)
        self.device = as_device("cpu" if device is None else device)
        self.manual_seed(DEFAULT_SEED if seed is None else seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Reseed from fresh entropy (as PyTorch's ``Generator.seed``) and return the seed."""
        seed = int(np.random.SeedSequence().entropy) % (1 << 63)
        self.manual_seed(seed)
        return seed

    def get_state(self) -> dict[str, Any]:
        state = self._np.bit_generator.state
        return {
            "seed": self._seed,
            "bit_generator": state["bit_generator"],
            "state": int(state["state"]["state"]),
            "inc": int(state["state"]["inc"]),
            "has_uint32": int(state["has_uint32"]),
            "uinteger": int(state["uinteger"]),
        }

    def set_state(self, state: dict[str, Any]) -> Generator:
        if state.get("bit_generator") != "PCG64":
            raise ValueError(
                f"Generator.set_state expects a PCG64 state from Generator.get_state, got "
                f"bit_generator={state.get('bit_generator')!r}"
            )
        self._seed = int(state["seed"])
        self._np = np.random.Generator(np.random.PCG64())
        self._np.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int(state["state"]), "inc": int(state["inc"])},
            "has_uint32": int(state["has_uint32"]),
            "uinteger": int(state["uinteger"]),
        }
        return self

    def __repr__(self) -> str:
        return f"Generator(seed={self._seed})"


def numpy_generator(generator: Generator | np.random.Generator | None) -> np.random.Generator:
    """The numpy generator to draw from: ``generator``'s, or the global CPU generator."""
    if generator is None:
        return generator_for(np)
    if isinstance(generator, Generator):
        return generator._np
    if isinstance(generator, np.random.Generator):
        return generator
    inner = getattr(generator, "_np", None)  # another Generator type built on the same idea
    if isinstance(inner, np.random.Generator):
        return inner
    raise TypeError(
        f"generator must be an autogradcli.data.Generator (or None for the global RNG), "
        f"got {type(generator).__name__}"
    )


def permutation(n: int, generator: Generator | np.random.Generator | None = None) -> np.ndarray:
    """A random permutation of ``range(n)`` as an int64 array."""
    return numpy_generator(generator).permutation(n).astype(np.int64, copy=False)
