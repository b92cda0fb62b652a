"""The implementation flags of torch.optim: ``foreach`` accepted (one whole-array path, equal to
torch's foreach and for-loop trajectories), ``fused``/``differentiable``/``capturable`` refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import optim

# name -> the flags its constructor has in torch
FLAGS = {
    "SGD": ("foreach", "differentiable", "fused"),
    "Adam": ("foreach", "differentiable", "fused", "capturable"),
    "AdamW": ("foreach", "differentiable", "fused", "capturable"),
    "Adagrad": ("foreach", "differentiable", "fused"),
    "RMSprop": ("foreach", "differentiable", "capturable"),
    "NAdam": ("foreach", "differentiable", "capturable"),
    "RAdam": ("foreach", "differentiable", "capturable"),
    "Adamax": ("foreach", "differentiable", "capturable"),
    "Adadelta": ("foreach", "differentiable", "capturable"),
    "Rprop": ("foreach", "differentiable", "capturable"),
    "ASGD": ("foreach", "differentiable", "capturable"),
}
REFUSED = [(n, f) for n, flags in FLAGS.items() for f in flags if f != "foreach"]


@pytest.mark.parametrize("name,flag", REFUSED)
def test_unsupported_flags_are_refused_clearly(name: str, flag: str) -> None:
    p = ag.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match=rf"^{flag}=True is not supported: .+\. Leave {flag}"):
        getattr(optim, name)([p], **{flag: True})
    getattr(optim, name)([p], **{flag: False})  # the default value is fine
    opt = getattr(optim, name)([p])
    with pytest.raises(ValueError, match=f"{flag}=True is not supported"):
        opt.add_param_group({"params": [ag.zeros(1, requires_grad=True)], flag: True})


def test_foreach_must_be_a_bool_or_none() -> None:
    with pytest.raises(TypeError, match="foreach must be None, True or False, got 'yes'"):
        optim.Adam([ag.zeros(2, requires_grad=True)], foreach="yes")


@pytest.mark.parametrize("name", list(FLAGS))
@pytest.mark.parametrize("foreach", [None, True, False])
def test_foreach_trajectories_equal_torch_foreach_and_loop(name: str, foreach: Any) -> None:
    """Both torch paths (foreach=True and the for-loop) give what our one path gives."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    init = [rng.standard_normal(s) for s in [(3, 4), (4,), (2, 2)]]
    kw = {"lr": 0.05} if name != "Adadelta" else {}
    ours = [ag.tensor(a.copy(), requires_grad=True) for a in init]
    opt = getattr(optim, name)(
        [{"params": ours[:2]}, {"params": ours[2:], "weight_decay": 0.1}], foreach=foreach, **kw
    )
    assert all(g["foreach"] is foreach for g in opt.param_groups)
    runs = []
    for tf in (True, False):
        ts = [torch.tensor(a.copy(), requires_grad=True) for a in init]
        topt = getattr(torch.optim, name)(
            [{"params": ts[:2]}, {"params": ts[2:], "weight_decay": 0.1}], foreach=tf, **kw
        )
        runs.append((ts, topt))
    for step in range(10):
        for params, o in [(ours, opt)] + runs:
            for p in params:
                arr = p.detach().numpy()
                g = np.cos(2.0 * arr) + 0.01 * step
                p.grad = ag.tensor(g) if isinstance(p, ag.Tensor) else torch.tensor(g)
            o.step()
    for tf, (ts, _) in zip((True, False), runs):
        # torch's own two ASGD paths differ by ~5e-7 (its foreach path does the eta arithmetic
        # on float32 tensors, its for-loop path, like ours, on Python floats)
        rtol = 1e-6 if name == "ASGD" and tf else 1e-9
        for a, t in zip(ours, ts):
            np.testing.assert_allclose(
                a.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=1e-12
            )
