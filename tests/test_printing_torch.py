"""``print(tensor)`` as PyTorch prints it (programs compare their output with pages printed by
PyTorch); the only difference allowed is our package name in ``dtype=`` and ``Size``."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag

RNG = np.random.default_rng(0)
CASES = [
    RNG.random((5, 3)).astype(np.float32),
    np.array([2.7183, 7.3891, 20.0855], dtype=np.float32),
    np.array([[1, 2], [3, 4]]),
    np.array(3.5, dtype=np.float32),
    np.array([1e-5, 1.0, 1e5], dtype=np.float32),
    np.array([True, False]),
    np.array([0.1, 0.2]),
    RNG.standard_normal((3, 4, 2)).astype(np.float32),
    np.array([np.nan, np.inf, -1.5], dtype=np.float32),
    np.arange(2000.0, dtype=np.float32),  # summarised, integer-valued, range > 1000: sci mode
    np.arange(2000.0, dtype=np.float32).reshape(40, 50),
    np.arange(1500),
    RNG.standard_normal((30, 40)).astype(np.float32),
    np.arange(3000.0, dtype=np.float32) / 7,
    np.array([123456789.0, 1.0], dtype=np.float32),
    np.array([1, 2], dtype=np.int32),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_print_matches_torch(i):
    torch = pytest.importorskip("torch")
    data = CASES[i]
    ours = str(ag.from_numpy(data.copy()))
    ref = str(torch.from_numpy(data.copy()))
    assert ours.replace("autogradcli.", "torch.") == ref


def test_print_with_grad_and_types():
    torch = pytest.importorskip("torch")
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        texts = [str(x), str(x * 2), str(lib.nn.Parameter(lib.ones(2))), str(type(x)), str(x.shape)]
        if lib is ag:
            ours = [t.replace("autogradcli", "torch") for t in texts]
    assert ours == texts
