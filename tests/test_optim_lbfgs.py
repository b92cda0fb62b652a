"""LBFGS against torch.optim.LBFGS: trajectories, losses and evaluation counts on Rosenbrock and a
small regression, with and without the strong-Wolfe line search, tolerances at their edges,
state layout and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autogradcli as ag
from autogradcli import optim


def _rosenbrock(m: Any, x: Any, y: Any) -> Any:
    """The extended Rosenbrock function over the concatenation of ``x`` and ``y``."""
    z = m.cat([x, y])
    return (100.0 * (z[1:] - z[:-1] ** 2) ** 2 + (1.0 - z[:-1]) ** 2).sum()


def _regression(m: Any, w: Any, b: Any, data: tuple[np.ndarray, np.ndarray]) -> Any:
    x, y = m.tensor(data[0]), m.tensor(data[1])
    return ((m.tanh(x @ w) + b - y) ** 2).mean()


def _run(m: Any, problem: str, init: list[np.ndarray], steps: int, **kw: Any) -> dict[str, Any]:
    params = [m.tensor(a.copy(), requires_grad=True) for a in init]
    opt = m.optim.LBFGS(params, **kw)
    rng = np.random.default_rng(7)
    data = (rng.standard_normal((12, 3)), rng.standard_normal((12, 2)))
    data = tuple(a.astype(init[0].dtype) for a in data)

    def closure() -> Any:
        opt.zero_grad()
        loss = _rosenbrock(m, *params) if problem == "rosen" else _regression(m, *params, data)
        loss.backward()
        return loss

    losses, trail = [], []
    for _ in range(steps):
        losses.append(opt.step(closure).item())
        trail.append([p.detach().numpy().copy() for p in params])
    st = opt.state[params[0]]
    return dict(losses=losses, trail=trail, evals=st["func_evals"], n_iter=st["n_iter"], opt=opt)


def _init(problem: str, dtype: str) -> list[np.ndarray]:
    if problem == "rosen":
        return [np.array([-1.2, 1.0, -0.5], dtype), np.array([0.8, 1.3], dtype)]
    rng = np.random.default_rng(3)
    return [rng.standard_normal((3, 2)).astype(dtype), np.zeros(2, dtype)]


CASES = [
    ("rosen", dict(line_search_fn=None, lr=0.1)),
    ("rosen", dict(line_search_fn="strong_wolfe")),
    ("rosen", dict(line_search_fn="strong_wolfe", history_size=3, max_iter=7)),
    ("regression", dict(line_search_fn=None, lr=0.1, history_size=2)),
    ("regression", dict(line_search_fn="strong_wolfe", max_iter=10, max_eval=12)),
]


@pytest.mark.parametrize("problem,kw", CASES, ids=[f"{p}-{kw}" for p, kw in CASES])
def test_trajectory_matches_torch_float64(problem: str, kw: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    init = _init(problem, "float64")
    ours, theirs = _run(ag, problem, init, 4, **kw), _run(torch, problem, init, 4, **kw)
    assert ours["evals"] == theirs["evals"] and ours["n_iter"] == theirs["n_iter"]
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-8, atol=1e-12)
    # the first step (up to 20 iterations) agrees to rounding; later ones drift apart slowly as
    # the quasi-Newton updates amplify summation-order differences of the two engines' losses
    for step, (a, t) in enumerate(zip(ours["trail"], theirs["trail"])):
        for x, y in zip(a, t):
            rtol = 1e-11 if step == 0 else 2e-6
            np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-12, err_msg=f"step {step}")
    if problem == "rosen" and kw.get("line_search_fn") and "max_iter" not in kw:
        np.testing.assert_allclose(np.concatenate(ours["trail"][-1]), 1.0, atol=1e-5)


@pytest.mark.parametrize("problem,kw", [CASES[1], CASES[3]], ids=["rosen-wolfe", "regression"])
def test_float32_stays_float32_and_follows_torch(problem: str, kw: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    init = _init(problem, "float32")
    ours, theirs = _run(ag, problem, init, 2, **kw), _run(torch, problem, init, 2, **kw)
    assert all(a.dtype == np.float32 for a in ours["trail"][-1])
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-3, atol=1e-5)
    st = ours["opt"].state_dict()["state"][0]
    assert st["d"].dtype == ag.float32 and st["prev_flat_grad"].dtype == ag.float32


def _linear(m: Any, c: float, **kw: Any) -> dict[str, Any]:
    """loss = c * sum(x): the gradient's max is exactly ``c`` at every point."""
    x = m.tensor([0.0, 0.0], dtype=m.float64, requires_grad=True)
    opt = m.optim.LBFGS([x], max_iter=3, **kw)

    def closure() -> Any:
        opt.zero_grad()
        loss = (x * c).sum()
        loss.backward()
        return loss

    opt.step(closure)
    st = opt.state[x]
    return dict(n_iter=st["n_iter"], evals=st["func_evals"], x=x.detach().numpy().tolist())


@pytest.mark.parametrize("tol", [0.25, 0.25 * (1 - 1e-12)])
def test_tolerance_grad_edge(tol: float) -> None:
    """max|g| <= tolerance_grad stops before any iteration; just below it, iterations run."""
    torch = pytest.importorskip("torch")
    ours, theirs = _linear(ag, 0.25, tolerance_grad=tol), _linear(torch, 0.25, tolerance_grad=tol)
    assert ours == theirs
    assert (ours["n_iter"] == 0) == (tol == 0.25)


@pytest.mark.parametrize("tol", [1e-9, 0.05, 0.5])
def test_tolerance_change_stops_like_torch(tol: float) -> None:
    torch = pytest.importorskip("torch")
    init = _init("regression", "float64")
    kw = dict(lr=0.1, tolerance_change=tol, max_iter=50)
    ours, theirs = _run(ag, "regression", init, 1, **kw), _run(torch, "regression", init, 1, **kw)
    assert ours["n_iter"] == theirs["n_iter"] and ours["evals"] == theirs["evals"]
    np.testing.assert_allclose(ours["trail"][-1][0], theirs["trail"][-1][0], rtol=1e-8)


def test_state_dict_layout_and_defaults_match_torch() -> None:
    torch = pytest.importorskip("torch")
    init = _init("rosen", "float64")
    kw = dict(line_search_fn="strong_wolfe", history_size=2)
    ours, theirs = _run(ag, "rosen", init, 2, **kw), _run(torch, "rosen", init, 2, **kw)
    sd, tsd = ours["opt"].state_dict(), theirs["opt"].state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert set(sd["state"]) == set(tsd["state"]) == {0}
    assert set(sd["state"][0]) == set(tsd["state"][0])
    for key in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(
            sd["state"][0][key].numpy(), tsd["state"][0][key].numpy(), rtol=1e-5
        )
    assert len(sd["state"][0]["old_dirs"]) == len(tsd["state"][0]["old_dirs"]) == 2


def test_state_dict_round_trip_continues_exactly() -> None:
    init = _init("regression", "float64")
    kw = dict(line_search_fn="strong_wolfe", history_size=3, max_iter=4)
    ref = _run(ag, "regression", init, 3, **kw)
    half = _run(ag, "regression", init, 2, **kw)
    params = [ag.tensor(a.copy(), requires_grad=True) for a in half["trail"][-1]]
    opt = optim.LBFGS(params, **kw)
    opt.load_state_dict(half["opt"].state_dict())
    rng = np.random.default_rng(7)
    data = (rng.standard_normal((12, 3)), rng.standard_normal((12, 2)))

    def closure() -> Any:
        opt.zero_grad()
        loss = _regression(ag, *params, data)
        loss.backward()
        return loss

    opt.step(closure)
    for a, b in zip(params, ref["trail"][-1]):
        np.testing.assert_array_equal(a.detach().numpy(), b)


def test_errors() -> None:
    a, b = ag.zeros(2, requires_grad=True), ag.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([a], line_search_fn="wolfe")

    def closure() -> Any:
        opt.zero_grad()
        loss = ((a - 1.0) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
    with pytest.raises(RuntimeError, match="needs a closure"):
        optim.LBFGS([a]).step(None)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_device_arrays_never_touch_numpy(line_search_fn: Any, strict_cuda: Any) -> None:
    """On the strict cupy stand-in the flat vectors stay on the device; results equal the CPU's."""
    init = _init("rosen", "float64")
    runs, opts = [], []
    for device in ("cpu", "cuda"):
        params = [ag.tensor(a.copy(), device=device, requires_grad=True) for a in init]
        opt = optim.LBFGS(params, line_search_fn=line_search_fn, lr=0.1, history_size=3)

        def closure(opt: Any = opt, params: list[Any] = params) -> Any:
            opt.zero_grad()
            loss = _rosenbrock(ag, *params)
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        assert opt.state[params[0]]["d"].device.type == device
        runs.append([p.detach().cpu().numpy() for p in params])
        opts.append((opt, params, closure))
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # CPU state loaded for device parameters continues on the device
    (cpu_opt, _, _), (dev_opt, dev_params, dev_closure) = opts
    dev_opt.load_state_dict(cpu_opt.state_dict())
    dev_opt.step(dev_closure)
    assert dev_opt.state[dev_params[0]]["d"].device.type == "cuda"
