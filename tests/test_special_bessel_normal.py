"""torch.special's modified Bessel functions (i0, i0e, i1, i1e) and normal-distribution functions
(ndtr, ndtri, log_ndtr) against torch: forward, backward and double backward (oracle), float32
values over wide ranges and tails, grad_fn names, integer inputs, the strict cupy stand-in."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from oracle import check

import autogradcli as ag

_X = np.array([-3.5, -1.0, -0.2, 0.0, 0.4, 2.0, 7.5])
_P = np.array([1e-6, 0.05, 0.3, 0.5, 0.8, 0.999])
BESSEL = ("i0", "i0e", "i1", "i1e")


@pytest.mark.parametrize("name", [*BESSEL, "ndtr", "log_ndtr"])
def test_matches_torch_with_gradients(name: str) -> None:
    check(lambda m, x: getattr(m.special, name)(x), _X)  # float64, double backward included
    check(lambda m, x: getattr(m.special, name)(x), _X, dtype="float32", gradgrad=False)


def test_ndtri_and_top_level_i0_match_torch() -> None:
    check(lambda m, x: m.special.ndtri(x), _P)
    check(lambda m, x: m.special.ndtri(x), _P, dtype="float32", gradgrad=False)
    check(lambda m, x: m.i0(x) + x.i0() + m.special.i0(x), _X)


_EDGES = [3.9999998, 4.0, 4.0000005, -4.0000005, 91.9, -91.9, 91.91, 1e30, -1e30]  # 4: the switch
WIDE = {
    "i0": np.concatenate([np.linspace(-90, 90, 20001), _EDGES]),  # overflows past 91.9
    "i0e": np.concatenate([np.linspace(-100, 100, 20001), _EDGES]),
    "i1": np.concatenate([np.linspace(-90, 90, 20001), _EDGES]),
    "i1e": np.concatenate([np.linspace(-100, 100, 20001), _EDGES]),
    "ndtr": np.linspace(-14, 9, 20001),  # down to 1e-44
    "ndtri": np.concatenate([np.linspace(0, 1, 20001), np.geomspace(1e-38, 1e-3, 200)]),
    "log_ndtr": np.concatenate([np.linspace(-40, 40, 20001), [-1e5, 1e5]]),
}


@pytest.mark.parametrize("name", sorted(WIDE))
def test_float32_values_over_wide_ranges(name: str) -> None:
    torch = pytest.importorskip("torch")
    x = np.concatenate([WIDE[name], [np.inf, -np.inf, np.nan, 0.0, -0.0]]).astype(np.float32)
    got = getattr(ag.special, name)(ag.tensor(x)).numpy()
    assert got.dtype == np.float32
    truth = getattr(torch.special, name)(torch.from_numpy(x).double()).numpy()
    with np.errstate(over="ignore"):
        want = truth.astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    fin = np.isfinite(want) & (np.abs(want) > 1e-37)
    # ndtr's float32 tail (as torch's own float32): the density's exp(-x^2/2) cond is x^2
    rtol = 2e-5 if name == "ndtr" else 2e-6
    np.testing.assert_allclose(got[fin], truth[fin], rtol=rtol, atol=1e-7)


def test_grad_fn_names_and_integer_inputs() -> None:
    torch = pytest.importorskip("torch")
    x = np.array([0.3, 0.6])
    for name in (*BESSEL, "ndtr", "ndtri", "log_ndtr"):
        ours = getattr(ag.special, name)(ag.tensor(x, requires_grad=True))
        theirs = getattr(torch.special, name)(torch.tensor(x, requires_grad=True))
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    ints = np.array([1, 2, 3])
    for name in (*BESSEL, "ndtr", "log_ndtr"):
        ours = getattr(ag.special, name)(ag.tensor(ints))
        theirs = getattr(torch.special, name)(torch.tensor(ints))
        assert ours.dtype == ag.float32 and theirs.dtype == torch.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_bessel_normal_on_the_strict_device(strict_cuda: Any) -> None:
    x = np.linspace(-2, 2, 6).astype(np.float32)
    for name in (*BESSEL, "ndtr", "log_ndtr"):
        fn = getattr(ag.special, name)
        a = ag.tensor(x, device="cuda", requires_grad=True)
        fn(a).sum().backward()
        c = ag.tensor(x, requires_grad=True)
        fn(c).sum().backward()
        np.testing.assert_allclose(a.grad.cpu().numpy(), c.grad.numpy(), rtol=1e-6, atol=1e-7)
