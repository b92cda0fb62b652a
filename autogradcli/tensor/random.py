"""The global random state: one seeded generator per array module (numpy, cupy)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

# PyTorch's default seed, so unseeded programs are deterministic as they are in PyTorch.
DEFAULT_SEED = 67280421310721

_seed = DEFAULT_SEED
_generators: dict[str, Any] = {}


def manual_seed(seed: int) -> None:
    """Seed every generator (CPU and CUDA) so runs repeat bit for bit."""
    global _seed
    _seed = int(seed)
    _generators.clear()


def initial_seed() -> int:
    return _seed


def generator_for(xp: ModuleType) -> Any:
    """The global generator of ``xp`` (``numpy.random.Generator`` or cupy's), created on demand."""
    gen = _generators.get(xp.__name__)
    if gen is None:
        if xp is np:
            gen = np.random.Generator(np.random.PCG64(_seed))
        else:
            gen = xp.random.default_rng(_seed)
        _generators[xp.__name__] = gen
    return gen


def rng_for(xp: ModuleType, generator: Any = None) -> Any:
    """The generator a draw uses: ``generator``'s own (an ``autogradcli.Generator``) or, when
    None, the global generator of ``xp``."""
    if generator is None:
        return generator_for(xp)
    inner = getattr(generator, "_np", None)
    if inner is None:
        raise TypeError(
            f"generator must be an autogradcli.Generator, not {type(generator).__name__}"
        )
    return inner


def get_rng_state() -> dict[str, Any]:
    """The CPU generator's state as plain data (safe to serialise)."""
    gen = generator_for(np)
    state = gen.bit_generator.state
    return {
        "seed": _seed,
        "bit_generator": state["bit_generator"],
        "state": int(state["state"]["state"]),
        "inc": int(state["state"]["inc"]),
        "has_uint32": int(state["has_uint32"]),
        "uinteger": int(state["uinteger"]),
    }


def set_rng_state(state: dict[str, Any]) -> None:
    global _seed
    _seed = int(state["seed"])
    gen = generator_for(np)
    gen.bit_generator.state = {
        "bit_generator": state["bit_generator"],
        "state": {"state": int(state["state"]), "inc": int(state["inc"])},
        "has_uint32": int(state["has_uint32"]),
        "uinteger": int(state["uinteger"]),
    }
