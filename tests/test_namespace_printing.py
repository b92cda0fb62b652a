"""``set_printoptions``: tensor reprs under each option equal torch's."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli


@pytest.fixture
def both():
    torch = pytest.importorskip("torch")
    yield torch
    autogradcli.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


OPTIONS = [
    {"precision": 2},
    {"precision": 6, "sci_mode": False},
    {"sci_mode": True},
    {"threshold": 5, "edgeitems": 2},
    {"linewidth": 30},
    {"sci_mode": True, "linewidth": 60},
    {"profile": "short"},
    {"profile": "full"},
]


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_reprs_equal_torchs_under_the_options(both, opts) -> None:
    torch = both
    values = [
        np.array([1.123456789, -2.5, 3e-5, 1234.5], dtype=np.float32),
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.linspace(0, 1, 1001, dtype=np.float32),
        np.arange(10, dtype=np.int64),
        np.random.default_rng(0).standard_normal((30, 40)).astype(np.float32) * 1e6,
    ]
    autogradcli.set_printoptions(**opts)
    torch.set_printoptions(**opts)
    for arr in values:
        assert repr(autogradcli.tensor(arr)) == repr(torch.tensor(arr)), arr


def test_sci_mode_is_reset_by_each_call_and_defaults_come_back(both) -> None:
    torch = both
    x = np.array([1.5, 2.25], dtype=np.float32)
    for lib in (autogradcli, torch):
        lib.set_printoptions(sci_mode=True)
        lib.set_printoptions(precision=3)  # sci_mode=None again, as in PyTorch
    assert repr(autogradcli.tensor(x)) == repr(torch.tensor(x)) == "tensor([1.500, 2.250])"
    autogradcli.set_printoptions(profile="default")
    assert autogradcli.get_printoptions()["precision"] == 4
    assert repr(autogradcli.tensor(x)) == "tensor([1.5000, 2.2500])"


def test_suffixes_wrap_at_the_line_width_like_torchs(both) -> None:
    torch = both
    short = np.linspace(-1, 1, 11, dtype=np.float32)
    full_rows = np.arange(16, dtype=np.float32).reshape(2, 8) / 3  # the last row is full
    for x, wrapped in ((short, False), (full_rows, True)):
        ours = repr(autogradcli.tensor(x, requires_grad=True))
        assert ours == repr(torch.tensor(x, requires_grad=True))
        assert ours.endswith(",\n       requires_grad=True)") is wrapped
