"""The op path's rarer modes cost one flag when off (issue 19's per-op overhead): ``STATE.special``
follows anomaly mode, bfloat16 and an export's trace, and the complex gradient rules switch on
with the first complex result, in time for its backward."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import autogradcli as ag
from autogradcli.autograd.grad_mode import STATE

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def restored_state():
    saved = (STATE.anomaly, STATE.bfloat16, STATE.trace)
    yield
    STATE.anomaly, STATE.bfloat16, STATE.trace = saved


@pytest.mark.parametrize("mode", ["anomaly", "bfloat16", "trace"])
def test_special_is_on_exactly_while_a_mode_is(mode, restored_state):
    STATE.anomaly, STATE.bfloat16, STATE.trace = False, False, None
    assert STATE.special is False
    setattr(STATE, mode, object() if mode == "trace" else True)
    assert STATE.special is True
    setattr(STATE, mode, None if mode == "trace" else False)
    assert STATE.special is False


def test_a_mode_set_under_another_keeps_special_on(restored_state):
    STATE.anomaly, STATE.bfloat16, STATE.trace = True, True, None
    STATE.anomaly = False
    assert STATE.special is True  # bfloat16 still on
    STATE.bfloat16 = False
    assert STATE.special is False


def test_anomaly_mode_still_notes_the_forward_line_of_a_fixed_arity_op(restored_state):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly"), ag.autograd.detect_anomaly(check_nan=False):
        y = x.exp()  # unary_apply's recorded path
        z = y * x  # binary_apply's
    assert "y = x.exp()" in y.grad_fn._anomaly_trace
    assert "z = y * x" in z.grad_fn._anomaly_trace
    assert getattr((x * 2.0).grad_fn, "_anomaly_trace", None) is None  # off again


def test_bfloat16_results_stay_bfloat16_through_every_path(restored_state):
    x = ag.tensor([1.5, -2.0], dtype=ag.bfloat16, requires_grad=True)
    assert STATE.special is True
    recorded = x * ag.tensor([2.0, 3.0], dtype=ag.bfloat16)
    with ag.no_grad():
        unrecorded = x.exp()
    assert recorded.dtype == unrecorded.dtype == ag.bfloat16


COMPLEX_FIRST = """
import json
import numpy as np
import autogradcli as ag
from autogradcli.ops import unary
plain = unary.Exp.backward
x = ag.tensor([0.5, -1.0], requires_grad=True)
ag.exp(x).sum().backward()  # real programs run the real formula as it is
real_untouched = unary.Exp.backward is plain
z = ag.tensor(np.array([0.3 + 0.4j, -0.2 + 1.0j]), requires_grad=True)
w = ag.exp(z) * ag.tensor(np.array([1.0 - 2.0j, 0.5j]))  # the first complex results
ag.view_as_real(w).sum().backward()  # exp's and mul's gradients conjugated, as torch's
print(json.dumps({"real_untouched": real_untouched, "wrapped": unary.Exp.backward is not plain,
    "grad": [p for v in z.grad.numpy().tolist() for p in (v.real, v.imag)],
    "real_grad": x.grad.tolist()}))
"""


def test_complex_rules_switch_on_with_the_first_complex_result():
    torch = pytest.importorskip("torch")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-c", COMPLEX_FIRST], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["real_untouched"] is True and got["wrapped"] is True
    z = torch.tensor([0.3 + 0.4j, -0.2 + 1.0j], dtype=torch.complex128, requires_grad=True)
    c = torch.tensor([1.0 - 2.0j, 0.5j], dtype=torch.complex128)
    torch.view_as_real(torch.exp(z) * c).sum().backward()
    expected = [p for v in z.grad.tolist() for p in (v.real, v.imag)]
    assert got["grad"] == pytest.approx(expected, rel=1e-12)
    assert got["real_grad"] == pytest.approx(torch.tensor([0.5, -1.0]).exp().tolist(), rel=1e-6)
