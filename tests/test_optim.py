"""Optimizers against torch.optim: 20-step trajectories for every flag, with two param groups,
state-dict layout and round trips, closures, zero_grad and hyperparameter errors."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import optim

try:
    import torch
except ImportError:  # the oracle is optional: the tests that need it skip one by one
    torch = None

SHAPES = [(3, 4), (4,), (5,)]  # group 0: the first two; group 1: the last
STEPS = 20


def _grad(p: np.ndarray, coef: np.ndarray, step: int) -> np.ndarray:
    """A deterministic, parameter-dependent gradient (both libraries get it from their own
    parameters, so the feedback of each trajectory is tested)."""
    return np.sin(3.0 * p) + 0.5 * coef * p + 0.1 * math.cos(step)


def _make(dtype: str, seed: int = 0) -> tuple[list[Any], list[Any], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    coefs = [rng.standard_normal(s) for s in SHAPES]
    ours = [ag.tensor(a.copy(), requires_grad=True) for a in init]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in init] if torch else []
    return ours, theirs, coefs


def _groups(params: list[Any], override: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"params": params[:2]}, {"params": params[2:], **override}]


def _set_grads(params: list[Any], coefs: list[np.ndarray], step: int, is_torch: bool) -> None:
    for p, c in zip(params, coefs):
        arr = p.detach().numpy()
        g = _grad(arr.astype(np.float64), c, step).astype(arr.dtype)
        p.grad = torch.tensor(g) if is_torch else ag.tensor(g)


def _np(p: Any) -> np.ndarray:
    return np.array(p.detach().numpy(), copy=True)


TOL = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-5, atol=2e-6)}

CASES = [
    ("SGD", dict(lr=0.1), dict(lr=0.05)),
    ("SGD", dict(lr=0.1, momentum=0.9), dict(momentum=0.5)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3), dict(dampening=0.0)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True), dict(lr=0.1, weight_decay=0.2)),
    ("SGD", dict(lr=0.1, weight_decay=0.1), dict(maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.8, weight_decay=0.1, maximize=True), dict(momentum=0.0)),
    (
        "SGD",
        dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.05, maximize=True),
        dict(lr=0.01),
    ),
    ("Adam", dict(lr=0.01), dict(lr=0.05)),
    ("Adam", dict(lr=0.01, amsgrad=True), dict(betas=(0.8, 0.99))),
    ("Adam", dict(lr=0.01, weight_decay=0.1), dict(eps=1e-3)),
    ("Adam", dict(lr=0.01, maximize=True), dict(amsgrad=True, weight_decay=0.2)),
    ("Adam", dict(lr=0.02, betas=(0.5, 0.9), amsgrad=True, weight_decay=0.1, maximize=True), {}),
    ("AdamW", dict(lr=0.01), dict(weight_decay=0.5)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.1), dict(maximize=True)),
    ("AdamW", dict(lr=0.02, maximize=True, betas=(0.6, 0.95)), dict(amsgrad=True)),
    ("RMSprop", dict(lr=0.01), dict(lr=0.001)),
    ("RMSprop", dict(lr=0.01, centered=True), dict(alpha=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.9), dict(centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1), dict(eps=1e-4)),
    ("RMSprop", dict(lr=0.01, maximize=True, weight_decay=0.1), dict(momentum=0.3)),
    ("Adagrad", dict(lr=0.1), dict(lr=0.5)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05), dict(weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6), dict(maximize=True)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.2, maximize=True), dict(lr_decay=0.1)),
    ("NAdam", dict(lr=0.01), dict(lr=0.05)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.1, weight_decay=0.1), dict(betas=(0.8, 0.99))),
    ("NAdam", dict(lr=0.02, weight_decay=0.2, decoupled_weight_decay=True), dict(maximize=True)),
    ("NAdam", dict(lr=0.02, maximize=True, weight_decay=0.1), dict(eps=1e-3, momentum_decay=0)),
    ("RAdam", dict(lr=0.01), dict(lr=0.05)),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.8)), dict(betas=(0.5, 0.7))),  # rho_t > 5 early
    ("RAdam", dict(lr=0.02, weight_decay=0.2, decoupled_weight_decay=True), dict(maximize=True)),
    ("RAdam", dict(lr=0.02, betas=(0.9, 0.7), weight_decay=0.1, maximize=True), dict(eps=1e-3)),
    ("Adamax", dict(lr=0.01), dict(lr=0.05)),
    ("Adamax", dict(lr=0.02, weight_decay=0.1), dict(betas=(0.5, 0.9), eps=1e-3)),
    ("Adamax", dict(lr=0.02, maximize=True), dict(weight_decay=0.2)),
    ("Adadelta", dict(), dict(lr=0.5)),
    ("Adadelta", dict(lr=0.5, rho=0.5, weight_decay=0.1), dict(eps=1e-3)),
    ("Adadelta", dict(lr=2.0, maximize=True), dict(rho=0.99, weight_decay=0.2)),
    ("Rprop", dict(), dict(lr=0.05)),
    ("Rprop", dict(lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05)), dict(maximize=True)),
    ("ASGD", dict(), dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=5, weight_decay=0.1), dict(maximize=True)),
    ("ASGD", dict(lr=0.1, t0=0), dict(lambd=0.01)),
]


ALL = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax", "Adadelta"]
ALL += ["Rprop", "ASGD"]


def _ids(case: tuple[str, dict[str, Any], dict[str, Any]]) -> str:
    name, kw, over = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items()) + "|" + str(over)


def _pair(name: str, kw: dict[str, Any], over: dict[str, Any], dtype: str, seed: int = 0):
    ours, theirs, coefs = _make(dtype, seed)
    opt = getattr(optim, name)(_groups(ours, over), **kw)
    topt = getattr(torch.optim, name)(_groups(theirs, over), **kw)
    return ours, theirs, coefs, opt, topt


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_trajectory_matches_torch(case: Any, dtype: str) -> None:
    pytest.importorskip("torch")
    name, kw, over = case
    ours, theirs, coefs, opt, topt = _pair(name, kw, over, dtype)
    for step in range(STEPS):
        _set_grads(ours, coefs, step, False)
        _set_grads(theirs, coefs, step, True)
        opt.step()
        topt.step()
        for i, (a, t) in enumerate(zip(ours, theirs)):
            assert a.dtype == getattr(ag, dtype)
            np.testing.assert_allclose(
                _np(a), _np(t), **TOL[dtype], err_msg=f"param {i} after step {step + 1}"
            )
    # state layout: same keys per parameter, same dtypes, same values
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert set(sd["state"]) == set(tsd["state"])
    for k, st in tsd["state"].items():
        assert set(sd["state"][k]) == set(st), k
        for key, v in st.items():
            ours_v = sd["state"][k][key]
            assert isinstance(ours_v, ag.Tensor)
            assert str(ours_v.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], key
            np.testing.assert_allclose(_np(ours_v), v.numpy(), **TOL[dtype], err_msg=key)
    assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in tsd["param_groups"]]
    for g, tg in zip(sd["param_groups"], tsd["param_groups"]):
        assert g == tg


def test_params_without_grad_are_skipped_and_version_bumps() -> None:
    ours, _, _ = _make("float64")
    opt = optim.Adam(ours, lr=0.1)
    ours[0].grad = ag.ones(3, 4, dtype=ag.float64)
    before = [_np(p) for p in ours]
    v0 = ours[0]._version
    opt.step()
    assert ours[0]._version > v0
    assert not np.allclose(_np(ours[0]), before[0])
    np.testing.assert_array_equal(_np(ours[1]), before[1])
    assert len(opt.state) == 1


@pytest.mark.parametrize("name", ALL)
def test_state_dict_round_trip_continues_exactly(name: str, tmp_path: Any) -> None:
    kw = {
        "SGD": dict(lr=0.1, momentum=0.9, nesterov=True),
        "Adam": dict(lr=0.01, amsgrad=True),
        "AdamW": dict(lr=0.01),
        "RMSprop": dict(lr=0.01, centered=True, momentum=0.5),
        "Adagrad": dict(lr=0.1, lr_decay=0.01),
        "NAdam": dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
        "RAdam": dict(lr=0.01, betas=(0.9, 0.8)),
        "Adamax": dict(lr=0.01),
        "Adadelta": dict(lr=0.5),
        "Rprop": dict(lr=0.01),
        "ASGD": dict(lr=0.05, t0=3),
    }[name]
    over = {"lr": 0.03}
    ref, _, coefs = _make("float32")
    ref_opt = getattr(optim, name)(_groups(ref, over), **kw)
    run, _, _ = _make("float32")
    run_opt = getattr(optim, name)(_groups(run, over), **kw)
    for step in range(10):
        for params, o in ((ref, ref_opt), (run, run_opt)):
            _set_grads(params, coefs, step, False)
            o.step()
    path = tmp_path / "opt.agt"
    ag.save({"optim": run_opt.state_dict(), "params": [p.detach() for p in run]}, path)
    saved = ag.load(path)
    resumed = [ag.tensor(_np(p), requires_grad=True) for p in saved["params"]]
    new_opt = getattr(optim, name)(_groups(resumed, {"lr": 0.5}), lr=0.5)
    new_opt.load_state_dict(saved["optim"])
    assert new_opt.param_groups[1]["lr"] == 0.03
    assert new_opt.param_groups[0]["params"][0] is resumed[0]
    for step in range(10, 20):
        for params, o in ((ref, ref_opt), (resumed, new_opt)):
            _set_grads(params, coefs, step, False)
            o.step()
    for a, b in zip(ref, resumed):
        np.testing.assert_array_equal(_np(a), _np(b))


def test_load_state_dict_copies_and_casts_state() -> None:
    ours, _, coefs = _make("float64")
    opt = optim.SGD(ours, lr=0.1, momentum=0.9)
    _set_grads(ours, coefs, 0, False)
    opt.step()
    sd = opt.state_dict()
    p32 = [ag.tensor(_np(p).astype("float32"), requires_grad=True) for p in ours]
    opt32 = optim.SGD(p32, lr=0.1, momentum=0.9)
    opt32.load_state_dict(sd)
    buf = opt32.state[p32[0]]["momentum_buffer"]
    assert buf.dtype == ag.float32
    assert buf._data is not sd["state"][0]["momentum_buffer"]._data


def test_load_state_dict_errors() -> None:
    ours, _, _ = _make("float64")
    opt = optim.SGD(_groups(ours, {}), lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD(ours, lr=0.1).load_state_dict(opt.state_dict())
    other = optim.SGD([{"params": ours[:1]}, {"params": ours[1:]}], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        other.load_state_dict(opt.state_dict())


def test_closure_runs_with_grad_enabled_and_returns_loss() -> None:
    pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, w0 = rng.standard_normal((6, 3)), rng.standard_normal(3)
    w = ag.tensor(w0.copy(), requires_grad=True)
    tw = torch.tensor(w0.copy(), requires_grad=True)
    opt, topt = optim.SGD([w], lr=0.1, momentum=0.9), torch.optim.SGD([tw], lr=0.1, momentum=0.9)
    seen = []

    def closure() -> Any:
        seen.append(ag.is_grad_enabled())
        opt.zero_grad()
        loss = (ag.tanh(ag.tensor(x) @ w) ** 2).sum()
        loss.backward()
        return loss

    def tclosure() -> Any:
        topt.zero_grad()
        loss = (torch.tanh(torch.tensor(x) @ tw) ** 2).sum()
        loss.backward()
        return loss

    with ag.no_grad():
        for _ in range(5):
            loss, tloss = opt.step(closure), topt.step(tclosure)
            assert abs(loss.item() - tloss.item()) < 1e-10
    assert seen == [True] * 5
    np.testing.assert_allclose(_np(w), _np(tw), rtol=1e-10)
    assert opt.step() is None


def test_zero_grad() -> None:
    ours, _, coefs = _make("float64")
    opt = optim.SGD(ours, lr=0.1)
    _set_grads(ours, coefs, 0, False)
    g = ours[0].grad
    opt.zero_grad(set_to_none=False)
    assert ours[0].grad is g and np.all(_np(g) == 0)
    opt.zero_grad()
    assert all(p.grad is None for p in ours)


def test_param_groups_and_defaults() -> None:
    pytest.importorskip("torch")
    ours, theirs, _ = _make("float64")
    opt = optim.SGD(_groups(ours, {"lr": 0.5}), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(_groups(theirs, {"lr": 0.5}), lr=0.1, momentum=0.9)
    assert opt.defaults == topt.defaults
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert repr(opt) == repr(topt)
    extra = ag.zeros(2, requires_grad=True)
    opt.add_param_group({"params": extra, "lr": 0.2})
    assert len(opt.param_groups[2]["params"]) == 1 and opt.param_groups[2]["params"][0] is extra
    assert opt.param_groups[2]["momentum"] == 0.9
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [ours[0]]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {ag.zeros(1, requires_grad=True)}})
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        opt.add_param_group({"params": [ours[0] * 2]})
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        opt.add_param_group({"params": [1.0]})
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(ours[0], lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optim.SGD([ours[0], ours[0]], lr=0.1)
    assert any("duplicate parameters" in str(w.message) for w in caught)


def test_adagrad_state_exists_from_construction() -> None:
    pytest.importorskip("torch")
    ours, theirs, _ = _make("float32")
    opt = optim.Adagrad(ours, initial_accumulator_value=0.25)
    topt = torch.optim.Adagrad(theirs, initial_accumulator_value=0.25)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert set(sd["state"]) == set(tsd["state"]) == {0, 1, 2}
    np.testing.assert_array_equal(_np(sd["state"][1]["sum"]), tsd["state"][1]["sum"].numpy())


BAD = [
    ("SGD", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("SGD", dict(lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    ("SGD", dict(lr=0.1, weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
    (
        "SGD",
        dict(lr=0.1, nesterov=True),
        "Nesterov momentum requires a momentum and zero dampening",
    ),
    (
        "SGD",
        dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
        "Nesterov momentum requires a momentum and zero dampening",
    ),
    ("Adam", dict(lr=-1e-3), "Invalid learning rate: -0.001"),
    ("Adam", dict(eps=-1.0), "Invalid epsilon value: -1.0"),
    ("Adam", dict(betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    ("Adam", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("Adam", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("AdamW", dict(betas=(0.9, 1.5)), "Invalid beta parameter at index 1: 1.5"),
    ("RMSprop", dict(alpha=-0.1), "Invalid alpha value: -0.1"),
    ("RMSprop", dict(momentum=-0.1), "Invalid momentum value: -0.1"),
    ("RMSprop", dict(eps=-0.1), "Invalid epsilon value: -0.1"),
    ("Adagrad", dict(lr_decay=-0.1), "Invalid lr_decay value: -0.1"),
    (
        "Adagrad",
        dict(initial_accumulator_value=-0.1),
        "Invalid initial_accumulator_value value: -0.1",
    ),
    ("Adagrad", dict(eps=-0.1), "Invalid epsilon value: -0.1"),
    ("NAdam", dict(lr=-1), "Invalid learning rate: -1"),
    ("NAdam", dict(momentum_decay=-0.1), "Invalid momentum_decay value: -0.1"),
    ("NAdam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ("RAdam", dict(lr=-1), "Invalid learning rate: -1"),
    ("RAdam", dict(betas=(-0.1, 0.9)), "Invalid beta parameter at index 0: -0.1"),
    ("RAdam", dict(weight_decay=-1e-3), "Invalid weight_decay value: -0.001"),
    ("Adamax", dict(lr=-1), "Invalid learning rate: -1"),
    ("Adamax", dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
    ("Adadelta", dict(lr=-1), "Invalid learning rate: -1"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(rho=-0.1), "Invalid rho value: -0.1"),
    ("Adadelta", dict(eps=-1e-6), "Invalid epsilon value: -1e-06"),
    ("Adadelta", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("LBFGS", dict(lr=-1), "Invalid learning rate: -1"),
    ("Rprop", dict(lr=-1), "Invalid learning rate: -1"),
    ("Rprop", dict(etas=(1.0, 1.2)), "Invalid eta values: 1.0, 1.2"),
    ("Rprop", dict(etas=(0.5, 1.0)), "Invalid eta values: 0.5, 1.0"),
    ("ASGD", dict(lr=-1), "Invalid learning rate: -1"),
    ("ASGD", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
]


@pytest.mark.parametrize("name,kw,msg", BAD)
def test_bad_hyperparameters_match_torch(name: str, kw: dict[str, Any], msg: str) -> None:
    pytest.importorskip("torch")
    p = ag.zeros(2, requires_grad=True)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([p], **kw)
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)
    assert str(ours.value) == str(theirs.value) == msg


@pytest.mark.parametrize("name", [*ALL, "LBFGS"])
def test_default_hyperparameters_match_torch(name: str) -> None:
    pytest.importorskip("torch")
    ours = getattr(optim, name)([ag.zeros(2, requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert ours.defaults == theirs.defaults


def test_updates_leave_grad_untouched_and_keep_dtype() -> None:
    ours, _, coefs = _make("float32")
    opt = optim.SGD(ours, lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True)
    for step in range(3):
        _set_grads(ours, coefs, step, False)
        g = _np(ours[0].grad)
        opt.step()
        np.testing.assert_array_equal(_np(ours[0].grad), g)
    assert all(p.dtype == ag.float32 for p in ours)
    assert opt.state[ours[0]]["momentum_buffer"].dtype == ag.float32


@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)),
        ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
        ("AdamW", dict(lr=0.01, maximize=True)),
        ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
        ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
        ("NAdam", dict(lr=0.01, weight_decay=0.1)),
        ("RAdam", dict(lr=0.01, betas=(0.9, 0.8), weight_decay=0.1, decoupled_weight_decay=True)),
        ("Adamax", dict(lr=0.01, weight_decay=0.1)),
        ("Adadelta", dict(lr=0.5, weight_decay=0.1, maximize=True)),
        ("Rprop", dict(lr=0.05, maximize=True)),
        ("ASGD", dict(lr=0.05, t0=1, weight_decay=0.1)),
    ],
)
def test_device_arrays_never_touch_numpy(name: str, kw: dict[str, Any], strict_cuda: Any) -> None:
    """On the strict cupy stand-in, state lives on the device and updates match the CPU run."""
    cpu, _, coefs = _make("float32")
    dev = [ag.tensor(_np(p), device="cuda", requires_grad=True) for p in cpu]
    opt, dopt = getattr(optim, name)(cpu, **kw), getattr(optim, name)(dev, **kw)
    for step in range(3):
        _set_grads(cpu, coefs, step, False)
        for p, c in zip(dev, cpu):
            p.grad = c.grad.to("cuda")
        opt.step()
        dopt.step()
    for p, c in zip(dev, cpu):
        assert p.is_cuda
        np.testing.assert_allclose(p.detach().cpu().numpy(), _np(c), rtol=1e-6, atol=1e-7)
    sd = dopt.state_dict()
    for st in sd["state"].values():
        for key, v in st.items():
            assert v.is_cuda != (key in ("step", "mu_product", "eta", "mu")), key  # host scalars
    fresh = getattr(optim, name)(dev, **kw)
    fresh.load_state_dict(opt.state_dict())  # CPU state onto device params
    assert all(v.is_cuda for k, v in fresh.state[dev[0]].items() if k != "step")
    fresh.step()  # continues on the device from loaded state


def test_trains_a_module_like_torch() -> None:
    """An MLP with nn.Linear, CrossEntropyLoss, Adam and a StepLR, step for step with torch."""
    pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 6)).astype("float32")
    y = rng.integers(0, 3, 16)

    def build(m: Any) -> tuple[Any, Any, Any]:
        net = m.nn.Sequential(m.nn.Linear(6, 8), m.nn.Tanh(), m.nn.Linear(8, 3))
        return net, m.optim.Adam(net.parameters(), lr=0.05), m.nn.CrossEntropyLoss()

    net, opt, loss_fn = build(ag)
    tnet, topt, tloss_fn = build(torch)
    with torch.no_grad():
        for p, tp in zip(net.parameters(), tnet.parameters()):
            tp.copy_(torch.tensor(_np(p)))
    sched = optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    tsched = torch.optim.lr_scheduler.StepLR(topt, step_size=3, gamma=0.5)
    for _ in range(8):
        opt.zero_grad()
        loss = loss_fn(net(ag.tensor(x)), ag.tensor(y))
        loss.backward()
        opt.step()
        sched.step()
        topt.zero_grad()
        tloss = tloss_fn(tnet(torch.tensor(x)), torch.tensor(y))
        tloss.backward()
        topt.step()
        tsched.step()
        assert abs(loss.item() - tloss.item()) < 1e-5
    for p, tp in zip(net.parameters(), tnet.parameters()):
        np.testing.assert_allclose(_np(p), _np(tp), rtol=1e-4, atol=1e-5)


def test_seed_style_optimizer_subclass_and_copies() -> None:
    """An Optimizer subclass written as the seeds write SGD (``required``, ``__setstate__``
    calling super, updates on ``p.data``) runs, and ``copy.deepcopy`` of an optimizer works."""
    import copy

    from autogradcli.optim.optimizer import Optimizer, required

    class PlainSGD(Optimizer):
        def __init__(self, params: Any, lr: Any = required, momentum: float = 0) -> None:
            super().__init__(params, dict(lr=lr, momentum=momentum))

        def __setstate__(self, state: dict[str, Any]) -> None:
            super().__setstate__(state)
            for group in self.param_groups:
                group.setdefault("nesterov", False)

        def step(self, closure: Any = None) -> Any:
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    d_p = p.grad.data
                    if group["momentum"] != 0:
                        st = self.state[p]
                        if "momentum_buffer" not in st:
                            buf = st["momentum_buffer"] = d_p.clone()
                        else:
                            buf = st["momentum_buffer"]
                            buf.mul_(group["momentum"]).add_(d_p)
                        d_p = buf
                    p.data.add_(d_p, alpha=-group["lr"])
            return None

    ours, _, coefs = _make("float64")
    ref, _, _ = _make("float64")
    with pytest.raises(ValueError, match="didn't specify a value of required optimization"):
        PlainSGD(ours)
    opt, ref_opt = PlainSGD(ours, lr=0.1, momentum=0.9), optim.SGD(ref, lr=0.1, momentum=0.9)
    for step in range(5):
        _set_grads(ours, coefs, step, False)
        _set_grads(ref, coefs, step, False)
        opt.step()
        ref_opt.step()
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12)
    twin = copy.deepcopy(opt)
    assert twin.param_groups[0]["nesterov"] is False and "nesterov" not in opt.param_groups[0]
    assert twin.state_dict()["state"].keys() == opt.state_dict()["state"].keys()
    adam = optim.Adam(ours, lr=0.1)
    adam_twin = copy.deepcopy(adam)
    _set_grads(ours, coefs, 0, False)
    adam.step()
    assert adam_twin.state_dict()["param_groups"] == adam.state_dict()["param_groups"]
