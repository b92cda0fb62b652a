"""The float32 kernels of erfc, erfinv, lgamma, digamma and trigamma (backend/special.py,
backend/gamma.py) against torch: float64 torch as the truth (float32 accuracy required), float32
torch at its own float32 tolerance; edges, poles, thresholds just inside and outside; the ops keep
float32, send float64 to scipy unchanged, and still run on the strict cupy stand-in."""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.backend import gamma
from autogradcli.backend.bessel import bessel32
from autogradcli.backend.special import erfc32, erfinv32, erfinv_backward, log_ndtr32, ndtri32

EDGE = 0.9966253  # |x| where Giles' erfinv switches to its tail polynomial (w = 5): 0.99662536


def _f32(*parts: Any) -> Any:
    return np.concatenate([np.asarray(p, np.float64).ravel() for p in parts]).astype(np.float32)


def _around(v: float) -> list[float]:
    """float32 neighbours of v: just below, v, just above."""
    f = np.float32(v)
    return [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]


ERFINV_X = _f32(
    np.linspace(-1, 1, 40_001),
    1 - np.geomspace(6e-8, 1e-2, 400),
    -1 + np.geomspace(6e-8, 1e-2, 400),
    np.geomspace(1e-38, 1e-3, 100),
    _around(EDGE),
    _around(-EDGE),
    [1.0, -1.0, 1.0000001, -1.5, 3.0, np.inf, -np.inf, np.nan, 0.0, -0.0],
)
ERFC_X = _f32(
    np.linspace(-12, 12, 48_001),
    np.geomspace(1e-38, 1e-3, 100),
    _around(10.5),
    _around(10.0),
    [0.0, -0.0, 1e30, -1e30, np.inf, -np.inf, np.nan],
)
GAMMA_X = _f32(
    np.linspace(-9.5, 40, 40_001),
    np.linspace(0.5, 2.5, 4001),  # lgamma's roots 1 and 2, digamma's at 1.4616
    np.geomspace(1e-38, 3e38, 600),
    -np.geomspace(1e-30, 1e6, 400) - 0.25,  # negative non-integers
    _around(4.0),  # the shift threshold
    [0.0, -1.0, -2.0, -7.0, -1e10, np.inf, -np.inf, np.nan],
)


def _torch(name: str, x: Any, dtype: Any) -> Any:
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x.astype(dtype))
    fn = {"trigamma": lambda v: torch.polygamma(1, v)}.get(name) or getattr(torch, name)
    return fn(t).numpy()


def _check(name: str, got: Any, x: Any, rtol: float, atol: float = 0.0) -> None:
    """got (float32) against torch in float64 within rtol/atol, and against torch's float32 at
    torch's float32 tolerance where torch's float32 is itself accurate; nan and inf exactly."""
    assert got.dtype == np.float32 and got.shape == x.shape
    truth = _torch(name, x, np.float64)
    with np.errstate(over="ignore"):
        want = truth.astype(np.float32)  # inf where float32 overflows
    assert np.array_equal(np.isnan(got), np.isnan(want)), x[np.isnan(got) != np.isnan(want)]
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    fin = ~inf & ~np.isnan(want) & (np.abs(want) > 1e-37)
    np.testing.assert_allclose(got[fin], truth[fin], rtol=rtol, atol=atol)
    t32 = _torch(name, x, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        good = fin & (np.abs(t32 - truth) <= 1e-6 * np.maximum(np.abs(truth), 1.0))
    np.testing.assert_allclose(got[good], t32[good], rtol=1.3e-6, atol=1e-5)


def test_erfinv32_matches_torch_near_the_edges() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning for log(0) or nan
        got = erfinv32(ERFINV_X)
    _check("erfinv", got, ERFINV_X, rtol=4e-7)
    assert (got[ERFINV_X == 1.0] == np.inf).all() and (got[ERFINV_X == -1.0] == -np.inf).all()
    assert np.array_equal(np.signbit(got[ERFINV_X == 0]), np.signbit(ERFINV_X[ERFINV_X == 0]))


def test_erfc32_keeps_relative_accuracy_in_the_tail() -> None:
    got = erfc32(ERFC_X)
    _check("erfc", got, ERFC_X, rtol=8e-7)
    tail = (ERFC_X > 6) & (ERFC_X < 9.5)  # erfc ~1e-17 .. 1e-41: a plain exp(-x^2) is 4e-6 off
    assert tail.sum() > 1000


def test_log_ndtr32_relative_in_both_tails() -> None:
    """Relative accuracy against float64 (no atol): the lower tail to -1e19 through the fit and
    then the asymptotic series (switch at 10.5 sqrt 2 = 14.849), the upper one down to 1e-37."""
    torch = pytest.importorskip("torch")
    edge = 10.5 * 2**0.5
    x = _f32(np.linspace(-40, 13, 53_001), -np.geomspace(40, 1e19, 200), _around(-edge),
             _around(edge), [0.0, -0.0, np.inf, -np.inf, np.nan])  # fmt: skip
    got = log_ndtr32(x)
    truth = torch.special.log_ndtr(torch.from_numpy(x).double()).numpy()
    assert got.dtype == np.float32
    assert np.array_equal(np.isnan(got), np.isnan(truth))
    assert got[x == np.inf].tolist() == [0.0] and got[x == -np.inf].tolist() == [-np.inf]
    lower = x < 0
    np.testing.assert_allclose(got[lower], truth[lower], rtol=1e-6, atol=0)
    upper = (x >= 0) & (np.abs(truth) > 1e-37)  # exp(-x^2/2)'s float32 rounding: x^2 * 3e-8
    np.testing.assert_allclose(got[upper], truth[upper], rtol=6e-6, atol=0)


def test_ndtri32_down_to_subnormal_p() -> None:
    """Giles' erfinv in log(4p(1-p)) to p = 3e-8 (switch at 4p(1-p) = e^-15.9), Newton's method
    on log_ndtr below, down to the smallest subnormal; +-inf at 0 and 1, nan outside."""
    torch = pytest.importorskip("torch")
    switch = np.exp(-15.9) / 4
    p = _f32(np.linspace(0, 1, 40_001), np.geomspace(1.4e-45, 1e-2, 2000),
             1 - np.geomspace(6e-8, 1e-2, 300), _around(switch), _around(0.5),
             [1.0000001, -0.1, np.inf, -np.inf, np.nan])  # fmt: skip
    got = ndtri32(p)
    truth = torch.special.ndtri(torch.from_numpy(p).double()).numpy()
    assert got.dtype == np.float32
    assert np.array_equal(np.isnan(got), np.isnan(truth))
    assert got[p == 0].tolist() == [-np.inf] and (got[p == 1] == np.inf).all()
    fin = np.isfinite(truth) & (truth != 0)
    np.testing.assert_allclose(got[fin], truth[fin], rtol=4e-7, atol=0)


def test_lgamma32_over_the_range_poles_and_roots() -> None:
    got = gamma.lgamma32(GAMMA_X)
    _check("lgamma", got, GAMMA_X, rtol=2e-6, atol=2e-6)
    poles = np.isin(GAMMA_X, [0.0, -1.0, -2.0, -7.0, -1e10, np.inf, -np.inf])
    assert (got[poles] == np.inf).all()


def test_digamma32_over_the_range_and_negative_values() -> None:
    got = gamma.digamma32(GAMMA_X)
    _check("digamma", got, GAMMA_X, rtol=1e-6, atol=1e-6)
    assert np.isnan(got[np.isin(GAMMA_X, [-1.0, -2.0, -7.0, -1e10])]).all()
    assert got[GAMMA_X == 0.0].tolist() == [-np.inf]


def test_trigamma32_matches_float64() -> None:
    x = GAMMA_X[np.abs(GAMMA_X) < 1e6]  # torch's float64 trigamma itself drifts beyond
    poles = (x <= 0) & (x == np.round(x))  # torch's float64 gives ~1e32 there, not inf
    got = gamma.trigamma32(x)
    _check("trigamma", got[~poles], x[~poles], rtol=1e-6, atol=1e-6)
    assert (got[poles] == np.inf).all()


@pytest.mark.parametrize(
    "name, x",
    [
        ("erfc", [[-3.0, 0.5], [4.0, 9.0]]),
        ("erfinv", [[-0.999, 0.2], [0.9999, 0.5]]),
        ("lgamma", [[-2.5, 0.3], [2.0, 50.0]]),
        ("digamma", [[-2.5, 0.3], [1.5, 50.0]]),
    ],
)
def test_ops_float32_kernel_and_float64_scipy(name: str, x: Any) -> None:
    """float32 in and out through the kernel (0-d, strided); float64 exactly scipy's value."""
    scipy_special = pytest.importorskip("scipy.special")
    a32 = np.asarray(x, np.float32)
    fn = getattr(ag, name)
    assert fn(ag.tensor(a32)).dtype == ag.float32
    strided = ag.tensor(a32).t()
    np.testing.assert_array_equal(fn(strided).numpy(), fn(ag.tensor(a32.T.copy())).numpy())
    scalar = fn(ag.tensor(a32[0, 1]))
    assert scalar.shape == () and scalar.dtype == ag.float32
    np.testing.assert_allclose(scalar.item(), _torch(name, a32[0, 1:2], np.float64)[0], rtol=2e-6)
    sname = {"lgamma": "gammaln", "digamma": "psi"}.get(name, name)
    a64 = np.asarray(x, np.float64)
    np.testing.assert_array_equal(fn(ag.tensor(a64)).numpy(), getattr(scipy_special, sname)(a64))


def test_polygamma1_float32_kernel_and_grad_of_digamma() -> None:
    torch = pytest.importorskip("torch")
    x = np.array([-3.3, -0.5, 0.1, 1.0, 3.99, 4.0, 4.01, 30.0], np.float32)
    a, t = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y = ag.polygamma(1, a)
    assert y.dtype == ag.float32
    want = torch.polygamma(1, torch.tensor(x, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-6)
    ag.digamma(a).sum().backward()  # digamma's gradient is trigamma
    torch.digamma(t).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=2e-6)


def test_float32_kernels_need_no_scipy(monkeypatch: Any) -> None:
    """float32 numpy inputs never reach scipy (an optional extra); float64 still needs it."""

    def missing(xp: Any) -> Any:
        raise RuntimeError("scipy missing")

    monkeypatch.setattr("autogradcli.ops.special.special_module", missing)
    x = ag.tensor(np.array([0.5, 1.5], np.float32))
    for fn in (ag.erfc, ag.erfinv, ag.lgamma, ag.digamma, lambda v: ag.polygamma(1, v)):
        assert fn(x).dtype == ag.float32
    with pytest.raises(RuntimeError, match="scipy missing"):
        ag.lgamma(x.double())


def test_erfinv_array_backward_equals_torch_and_the_graph_one() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.999, 0.999, (5, 7)).astype(np.float32)
    g = rng.standard_normal((5, 7)).astype(np.float32)
    a, t = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ag.erfinv(a).backward(ag.tensor(g))
    torch.erfinv(t).backward(torch.tensor(g))
    assert a.grad.dtype == ag.float32
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=2e-6)
    (graph,) = ag.autograd.grad(ag.erfinv(a), a, ag.tensor(g), create_graph=True)
    np.testing.assert_allclose(graph.detach().numpy(), a.grad.numpy(), rtol=1e-6)
    zero_d = erfinv_backward(np.float32(2.0), np.array(0.5, np.float32))
    assert zero_d.shape == () and zero_d == pytest.approx(2 * np.sqrt(np.pi) / 2 * np.exp(0.25))


def test_float32_ops_on_the_strict_device_equal_the_kernels(strict_cuda: Any) -> None:
    """Device arrays keep the scipy-module path (cupyx.scipy.special's stand-in): same values."""
    x = np.linspace(0.1, 0.9, 6).astype(np.float32)
    for fn in (ag.erfc, ag.erfinv, ag.lgamma, ag.digamma, lambda v: ag.polygamma(1, v)):
        dev = fn(ag.tensor(x, device="cuda"))
        assert dev.dtype == ag.float32
        np.testing.assert_allclose(
            dev.cpu().numpy(), fn(ag.tensor(x)).numpy(), rtol=1e-6, atol=1e-6
        )


@pytest.mark.parametrize("size", [2 * 4096 - 1, 2 * 4096, 2 * 4096 + 1, 5 * 4096 + 7])
def test_blockwise_around_its_threshold(size: int, monkeypatch: Any) -> None:
    """Under two blocks: one call on the whole array; from two: blocks, a short last one, tuple
    outputs and non-contiguous inputs assembled in the input's shape."""
    from autogradcli.backend import blocks

    monkeypatch.setattr(blocks, "BLOCK", 4096)
    calls: list[int] = []

    def fn(a: Any, b: Any) -> Any:
        calls.append(a.size)
        return a * b, (a + b).astype(np.float64)

    x = np.arange(2 * size, dtype=np.float32).reshape(size, 2)[:, :1]  # not contiguous
    y = np.full((size, 1), 2.0, np.float32)
    prod, total = blocks.blockwise(fn, x, y)
    assert prod.shape == x.shape and total.dtype == np.float64
    np.testing.assert_array_equal(prod, x * 2)
    np.testing.assert_array_equal(total, x + 2.0)
    assert calls == (
        [x.size] if x.size < 8192 else [min(4096, x.size - i) for i in range(0, x.size, 4096)]
    )
    calls.clear()
    dest = np.empty(x.size, np.float32), np.empty(x.size, np.float32)

    def into(a: Any, b: Any, out: Any) -> None:
        calls.append(a.size)
        np.multiply(a.ravel(), b.ravel(), out=out[0])
        np.add(a.ravel(), b.ravel(), out=out[1])

    assert blocks.blockwise(into, x, y, out=dest) is dest  # written in place, no assembling
    np.testing.assert_array_equal(dest[0], x.ravel() * 2)
    np.testing.assert_array_equal(dest[1], x.ravel() + 2)
    assert len(calls) == (1 if x.size < 8192 else -(-x.size // 4096))


def test_kernels_blocked_equal_whole(monkeypatch: Any) -> None:
    """Every kernel gives the same values over blocks as over the whole array."""
    from autogradcli.backend import blocks, special

    kernels = [(erfc32, ERFC_X), (erfinv32, ERFINV_X), (special.erf32, ERFC_X)]
    kernels += [(f, GAMMA_X) for f in (gamma.lgamma32, gamma.digamma32, gamma.trigamma32)]
    kernels += [(partial(bessel32, order=o, scaled=s), GAMMA_X) for o in (0, 1) for s in (0, 1)]
    kernels += [(log_ndtr32, GAMMA_X), (ndtri32, ERFINV_X * 0.5 + 0.5)]
    whole = [f(x) for f, x in kernels]
    gelu = special.gelu_forward(ERFC_X, None), special.gelu_tanh_forward(ERFC_X)
    monkeypatch.setattr(blocks, "BLOCK", 1000)
    for (f, x), want in zip(kernels, whole):
        np.testing.assert_array_equal(f(x.reshape(-1, 1)).ravel(), want)
    for got, want in zip(
        (special.gelu_forward(ERFC_X, None), special.gelu_tanh_forward(ERFC_X)), gelu
    ):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes_stay_half_computed_in_float32(dtype: str) -> None:
    """float16/bfloat16 in, the same dtype out: the float32 value rounded once, as torch's."""
    torch = pytest.importorskip("torch")
    x = np.array([0.3, 0.6, -2.5, 7.0, 1.5], np.float32)
    for name in ("erfc", "erfinv", "lgamma", "digamma", "trigamma", "i0e", "ndtr", "log_ndtr"):
        xin = x * 0.3 if name == "erfinv" else x
        half = ag.tensor(xin).to(getattr(ag, dtype))
        if name == "trigamma":
            got = ag.polygamma(1, half)
        else:
            got = getattr(ag.special if hasattr(ag.special, name) else ag, name)(half)
        assert got.dtype == getattr(ag, dtype), name
        rounded = torch.tensor(half.float().numpy())  # the half input, exactly, in float32
        fn = {"trigamma": lambda t: torch.polygamma(1, t)}.get(name)
        fn = fn or getattr(torch.special, name, None) or getattr(torch, name)
        want = fn(rounded).to(getattr(torch, dtype)).float()
        np.testing.assert_array_equal(got.float().numpy(), want.numpy(), err_msg=name)


def test_empty_and_zero_d_keep_shape_dtype_and_grad() -> None:
    fns = [ag.erfc, ag.erfinv, ag.lgamma, ag.digamma, lambda v: ag.polygamma(1, v), ag.erf]
    for fn in [*fns, ag.special.ndtr, ag.special.i0e]:
        for shape in [(0,), (0, 3), (), (3, 0, 2)]:
            y = fn(ag.zeros(shape) + 0.5)
            assert y.shape == shape and y.dtype == ag.float32
        a = ag.zeros((0, 3), requires_grad=True)
        fn(a).sum().backward()
        assert a.grad.shape == (0, 3)
