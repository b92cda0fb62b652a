"""``kl_div``/``KLDivLoss`` and adaptive max pooling (``adaptive_max_pool1d/2d`` and their
layers) against PyTorch on identical data (issue 21)."""

import warnings

import numpy as np
import pytest
from module_oracle import compare_module
from oracle import check

import autogradcli as ag
import autogradcli.nn as nn

_RNG = np.random.default_rng(4)
_LOGP = np.log(_RNG.dirichlet(np.ones(4), size=3))
_P = _RNG.dirichlet(np.ones(4), size=3)
_P_WITH_ZEROS = np.where(_P < 0.2, 0.0, _P)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
def test_kl_div_matches_torch(reduction, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 'mean' warns in both
        check(
            lambda m, x, t: m.nn.functional.kl_div(x, t, reduction=reduction),
            _LOGP,
            _P,
            dtype=dtype,
        )
        check(
            lambda m, x, t: m.nn.functional.kl_div(x, t, reduction=reduction),
            _LOGP,
            _P_WITH_ZEROS,
            dtype=dtype,
            grad_inputs=[0],
        )
        check(
            lambda m, x, t: m.nn.functional.kl_div(x, t, reduction=reduction, log_target=True),
            _LOGP,
            np.log(_P),
            dtype=dtype,
        )


def test_kl_div_warning_module_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ag.nn.functional.kl_div(ag.tensor(_LOGP), ag.tensor(_P))
        ag.nn.functional.kl_div(ag.tensor(_LOGP), ag.tensor(_P), reduction="batchmean")
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.nn.functional.kl_div(torch.tensor(_LOGP), torch.tensor(_P))
    assert [str(w.message) for w in caught] == [str(w.message) for w in theirs]
    assert caught[0].filename == __file__
    compare_module(lambda nn: nn.KLDivLoss(reduction="batchmean"), _LOGP, _P, tol=(1e-9, 1e-7))
    assert repr(nn.KLDivLoss(log_target=True)) == repr(torch.nn.KLDivLoss(log_target=True))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        ag.nn.functional.kl_div(ag.tensor(_LOGP), ag.tensor(_P), reduction="avg")


@pytest.mark.parametrize("size", [2, (2, 3), (5, None), 1, (4, 7)])
def test_adaptive_max_pool2d_matches_torch(size):
    check(lambda m, x: m.nn.functional.adaptive_max_pool2d(x, size), (2, 3, 5, 7), gradgrad=False)
    torch = pytest.importorskip("torch")
    x = _RNG.standard_normal((3, 5, 7))
    ours = ag.nn.functional.adaptive_max_pool2d(ag.tensor(x), size, return_indices=True)
    theirs = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), size, return_indices=True)
    assert ours[1].dtype == ag.int64 and ours[1].tolist() == theirs[1].tolist()


def test_adaptive_max_pool1d_layers_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    check(
        lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 3),
        (2, 3, 7),
        dtype="float32",
        gradgrad=False,
    )
    compare_module(lambda nn: nn.AdaptiveMaxPool2d((2, None)), (2, 3, 5, 4))
    compare_module(lambda nn: nn.AdaptiveMaxPool1d(3), (2, 7))
    for make in (
        lambda nn: nn.AdaptiveMaxPool2d((2, None)),
        lambda nn: nn.AdaptiveMaxPool1d(3, True),
    ):
        assert repr(make(nn)) == repr(make(torch.nn))
    for case in (
        lambda m: m.nn.functional.adaptive_max_pool2d(m.ones(2, 5), 2),
        lambda m: m.nn.functional.adaptive_max_pool1d(m.ones(5), 2),
    ):
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(ag)
        assert str(ours.value) == str(theirs.value)
