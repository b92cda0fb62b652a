"""PyTorch as the oracle for whole layers: build the same layer in both libraries, load torch's
state_dict into ours (same names and shapes, else the load fails), run both on identical inputs
and compare outputs, input gradients and parameter gradients; then once more on the strict cupy
stand-in (``device='cuda'``), where numpy called on a device array fails.

    compare_module(lambda m: m.ConvTranspose2d(4, 6, 3), (2, 4, 5, 5))

``make(nn)`` receives ``autogradcli.nn`` or ``torch.nn``. Inputs are shapes (random floats),
arrays (integer and bool arrays are passed as they are and get no gradient) or None. ``call(layer, *inputs)``
overrides the forward call (for keyword arguments, masks, tuple outputs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from lazy_torch import torch  # without PyTorch: skips each test that uses it, not whole files
from strict_xp import device_pass

import autogradcli as ag
import autogradcli.nn as nn

TOL = {"float64": (1e-9, 1e-7), "float32": (1e-5, 1e-4)}


def _numpy(t: Any) -> np.ndarray:
    if isinstance(t, ag.Tensor):
        return ag.backend.to_numpy(t.detach()._data)
    return t.detach().numpy()


def _outputs(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [o for o in out if o is not None]
    return [out]


def load_torch_state(ours: Any, theirs: Any, device: str = "cpu") -> None:
    """Copy torch's state_dict (a module or a saved dict) into ``ours`` through
    ``load_state_dict`` (strict: names and shapes must match)."""
    items = theirs.items() if isinstance(theirs, dict) else theirs.state_dict().items()
    state = {k: ag.tensor(v.detach().numpy().copy(), device=device) for k, v in items}
    ours.load_state_dict(state)


def compare_module(
    make: Callable[[Any], Any],
    *inputs: Any,
    call: Callable[..., Any] | None = None,
    dtype: str = "float64",
    train: bool = False,
    seed: int = 0,
    strict: bool = True,
    tol: tuple[float, float] | None = None,
) -> tuple[Any, Any]:
    """Assert our layer matches torch's (forward, input and parameter grads); returns both."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in inputs:
        if spec is None:
            arrays.append(None)
        elif isinstance(spec, np.ndarray):
            arrays.append(spec.astype(dtype) if spec.dtype.kind == "f" else spec)
        else:
            arrays.append(rng.standard_normal(tuple(spec)).astype(dtype))
    call = call or (lambda layer, *xs: layer(*xs))
    tdtype = getattr(torch, dtype)
    torch.manual_seed(seed)
    theirs = make(torch.nn).to(tdtype)
    theirs.train(train)
    start = {k: v.detach().clone() for k, v in theirs.state_dict().items()}  # before forward
    t_in = [
        None if a is None else torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays
    ]
    t_out = _outputs(call(theirs, *t_in))
    ups = [rng.standard_normal(tuple(o.shape)).astype(dtype) for o in t_out]
    t_live = [(o, u) for o, u in zip(t_out, ups) if o.requires_grad]
    torch.autograd.backward([o for o, _ in t_live], [torch.tensor(u) for _, u in t_live])
    ours = make(nn).to(getattr(ag, dtype))
    tol = tol or TOL[dtype]
    devices = ["cpu", "cuda"] if strict else ["cpu"]
    for device in devices:
        ctx = device_pass() if device == "cuda" else _null()
        with ctx:
            _run_ours(ours, theirs, start, arrays, call, ups, t_in, t_out, train, device, tol)
    return ours, theirs


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


def _run_ours(ours, theirs, start, arrays, call, ups, t_in, t_out, train, device, tol) -> None:
    atol, rtol = tol
    ours.to(device)
    load_torch_state(ours, start, device)
    ours.train(train)
    ours.zero_grad()
    a_in = [
        None if a is None else ag.tensor(a, device=device, requires_grad=a.dtype.kind == "f")
        for a in arrays
    ]
    a_out = _outputs(call(ours, *a_in))
    assert len(a_out) == len(t_out)
    where = f" (on {device})"
    for a, t in zip(a_out, t_out):
        assert tuple(a.shape) == tuple(t.shape), f"shape {tuple(a.shape)} != {tuple(t.shape)}"
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"dtype {a.dtype}"
        np.testing.assert_allclose(
            _numpy(a), _numpy(t), atol=atol, rtol=rtol, err_msg="forward" + where
        )
    live = [(a, u) for a, t, u in zip(a_out, t_out, ups) if t.requires_grad]
    ag.autograd.backward([a for a, _ in live], [ag.tensor(u, device=device) for _, u in live])
    for i, (a, t) in enumerate(zip(a_in, t_in)):
        if t is None or t.grad is None:
            continue
        assert a.grad is not None, f"input {i}: no gradient{where}"
        assert a.grad.dtype == a.dtype, f"input {i}: grad dtype {a.grad.dtype}{where}"
        np.testing.assert_allclose(
            _numpy(a.grad),
            _numpy(t.grad),
            atol=atol,
            rtol=rtol,
            err_msg=f"grad of input {i}{where}",
        )
    t_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        tp = t_params[name]
        if tp.grad is None:
            assert p.grad is None or not np.any(_numpy(p.grad)), f"{name}: torch has no grad"
            continue
        assert p.grad is not None, f"{name}: no gradient{where}"
        np.testing.assert_allclose(
            _numpy(p.grad), _numpy(tp.grad), atol=atol, rtol=rtol, err_msg=f"grad of {name}{where}"
        )
    ours.to("cpu")


def same_repr(make: Callable[[Any], Any]) -> None:
    assert repr(make(nn)) == repr(make(torch.nn))


def state_shapes(module: Any) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in module.state_dict().items()}


__all__: Sequence[str] = ["compare_module", "load_torch_state", "same_repr", "state_shapes"]
