"""``DataLoader(pin_memory=True)`` on a machine without a GPU warns as PyTorch does, once per
iteration; without ``pin_memory`` nothing is said."""

from __future__ import annotations

import warnings

import pytest

import autogradcli as ag


def _warnings(lib, **kwargs) -> list[tuple[type, str]]:
    ds = lib.utils.data.TensorDataset(lib.arange(6))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in lib.utils.data.DataLoader(ds, batch_size=4, **kwargs):
            pass
    return [(w.category, str(w.message)) for w in caught]


def test_pin_memory_without_an_accelerator_warns_as_torch() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() or ag.cuda.is_available():
        pytest.skip("the machine has a GPU")
    ours, theirs = _warnings(ag, pin_memory=True), _warnings(torch, pin_memory=True)
    assert ours == theirs and len(ours) == 1 and ours[0][0] is UserWarning
    assert _warnings(ag) == _warnings(torch) == []
