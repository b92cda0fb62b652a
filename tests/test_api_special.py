"""``autogradcli.special`` (torch.special's names over the ops) against PyTorch (issue 21)."""

import numpy as np
import pytest
from oracle import check

_P = np.array([0.05, 0.2, 0.5, 0.9, 0.999])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.special.expm1(x) + m.special.log1p(x) + m.special.expit(x),
        lambda m, x: m.special.logit(x),
        lambda m, x: m.special.logit(x * 1.05, eps=0.01),
        lambda m, x: m.special.erf(x) + m.special.erfc(x) + m.special.erfinv(x * 0.9),
        lambda m, x: m.special.gammaln(x) + m.special.digamma(x) + m.special.psi(x),
        lambda m, x: m.special.exp2(x) + m.special.logsumexp(x, 0),
        lambda m, x: m.special.softmax(x, 0) + m.special.log_softmax(x, 0),
        lambda m, x: m.special.xlogy(x, x * 2) + m.special.xlogy(x, 3.0),
    ],
    ids=range(8),
)
def test_special_matches_torch(fn):
    check(fn, _P)
    check(fn, _P, dtype="float32", gradgrad=False)


def test_xlogy_zero_and_nan_match_torch():
    check(
        lambda m, x, y: m.special.xlogy(x, y),
        np.array([0.0, 1.0, 2.0, 0.0]),
        np.array([0.0, 2.0, np.nan, np.nan]),
        grad=False,
    )


def test_deprecated_assert_allclose_matches_torch():
    torch = pytest.importorskip("torch")
    import autogradcli as ag

    for m in (ag, torch):
        with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated since 1.12"):
            m.testing.assert_allclose(m.ones(2), [1.0, 1.0])
        with pytest.warns(FutureWarning):
            m.testing.assert_allclose(
                m.tensor([float("nan"), 1.0]), m.tensor([float("nan"), 1.00001])
            )
        with pytest.warns(FutureWarning):
            m.testing.assert_allclose(m.ones(2), m.ones(2, dtype=m.float64))
        with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="not close"):
            m.testing.assert_allclose(m.ones(2), m.zeros(2))


def test_top_level_logit_xlogy_sinc_and_matrix_power_match_torch():
    check(lambda m, x: m.logit(x) + x.logit(eps=0.1), _P)
    check(lambda m, x: m.xlogy(x, x + 1) + x.xlogy(2.0), _P)
    check(lambda m, x: m.sinc(x - 0.5) + m.sinc(x * 0), _P, gradgrad=False)
    check(lambda m, x: m.matrix_power(x, 3) + m.matrix_power(x, 0) + x.matrix_power(1), (2, 3, 3))
