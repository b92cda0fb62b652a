"""Anomaly mode against torch: the nan check's error, the forward-trace warning, the switches."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autogradcli as ag


def _run(lib, make_loss, **mode):
    """(error message or None, warning messages) of one backward in ``lib``'s anomaly mode."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.set_detect_anomaly(True, **mode):
            loss = make_loss(lib)
            try:
                loss.backward()
                err = None
            except RuntimeError as e:
                err = str(e)
    return err, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _div_self(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    return (x / x).sum()


def test_nan_in_backward_is_the_error_torch_raises():
    torch = pytest.importorskip("torch")
    ours, ours_warn = _run(ag, _div_self)
    theirs, _ = _run(torch, _div_self)
    assert ours == theirs == "Function 'DivBackward0' returned nan values in its 1th output."
    assert ours_warn[0].startswith("Error detected in DivBackward0. Traceback of forward call")


def test_inf_is_not_nan_and_the_check_can_be_off():
    def inf_only(lib):  # d/dx sqrt(x) at 0 is inf: no nan anywhere
        x = lib.tensor([0.0, 4.0], requires_grad=True)
        return x.sqrt().sum()

    assert _run(ag, inf_only)[0] is None
    assert _run(ag, _div_self, check_nan=False)[0] is None
    assert _run(ag, _div_self)[0] is not None


def test_nan_passes_silently_outside_anomaly_mode():
    x = ag.tensor([0.0, 1.0], requires_grad=True)
    with np.errstate(all="ignore"):
        (x / x).sum().backward()
    assert np.isnan(x.grad.numpy()).any()


class _Fails(ag.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise ValueError("backward failed")


@pytest.mark.parametrize(
    "make",
    [
        lambda x: _Fails.apply(x),  # the general recording path
        lambda x: _Fails.apply(x.sin()),  # ... behind a one-argument built-in
        lambda x: _Fails.apply(x * x),  # ... behind a two-argument built-in
    ],
)
def test_a_failing_backward_warns_with_the_users_forward_line(make):
    x = ag.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ag.autograd.set_detect_anomaly(True):
            y = make(x).sum()  # the forward call the trace must show
        with (
            pytest.raises(ValueError, match="backward failed"),
            ag.autograd.set_detect_anomaly(True),
        ):
            y.backward()
    (msg,) = [str(w.message) for w in caught]
    head, trace = msg.split("\n", 1)
    assert (
        head == "Error detected in _FailsBackward. Traceback of forward call that caused the error:"
    )
    assert __file__ in trace and "y = make(x).sum()" in trace
    assert "autogradcli" + "/autograd/" not in trace  # our own frames are left out


def test_no_trace_is_kept_outside_anomaly_mode():
    x = ag.ones(2, requires_grad=True)
    assert not hasattr((x * x).grad_fn, "_anomaly_trace")
    with ag.autograd.set_detect_anomaly(True):  # both fixed-arity paths keep one
        assert hasattr((x * x).grad_fn, "_anomaly_trace")
        assert hasattr(x.sin().grad_fn, "_anomaly_trace")


def test_switches_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (ag, torch):
        assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (False, True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctx = lib.autograd.detect_anomaly(check_nan=False)
        assert str(caught[0].message) == (
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging."
        )
        assert not lib.is_anomaly_enabled()  # on only inside the with
        with ctx:
            assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (True, False)
        assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (False, True)
        lib.autograd.set_detect_anomaly(True)  # as a call: stays on
        assert lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
        assert not lib.is_anomaly_enabled()
