"""PyTorch as the oracle: run the same function on autogradcli and torch from identical data and
compare the forward, the gradients and the second-order gradients.

    check(lambda m, x, y: m.maximum(x, y), (3, 1, 4), (5, 1))

``fn(m, *tensors)`` receives the library module (``autogradcli`` or ``torch``) first, so one
lambda serves both. Inputs are shapes (random data) or arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import autogradcli as ag

torch = pytest.importorskip("torch")

TOL = {"float64": (1e-9, 1e-7), "float32": (2e-5, 2e-4)}


def _as_arrays(inputs: Sequence[Any], dtype: str, rng: np.random.Generator) -> list[np.ndarray]:
    arrays = []
    for spec in inputs:
        if isinstance(spec, np.ndarray):
            arrays.append(spec.astype(dtype) if spec.dtype.kind == "f" else spec)
        else:
            arrays.append(rng.standard_normal(tuple(spec)).astype(dtype))
    return arrays


def _to_numpy(t: Any) -> np.ndarray:
    if isinstance(t, ag.Tensor):
        return ag.backend.to_numpy(t.detach()._data)
    return (t.detach() + 0).numpy()  # + 0 materialises torch's ZeroTensors


def _outputs(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, (ag.Tensor, torch.Tensor))]
    return [out]


def check(
    fn: Callable[..., Any],
    *inputs: Any,
    dtype: str = "float64",
    grad: bool = True,
    gradgrad: bool = True,
    atol: float | None = None,
    rtol: float | None = None,
    device: str = "cpu",
    seed: int = 0,
    grad_inputs: Sequence[int] | None = None,
) -> None:
    """Assert autogradcli matches torch on forward, backward and double backward of ``fn``."""
    rng = np.random.default_rng(seed)
    arrays = _as_arrays(inputs, dtype, rng)
    default_atol, default_rtol = TOL.get(dtype, (1e-6, 1e-5))
    atol = default_atol if atol is None else atol
    rtol = default_rtol if rtol is None else rtol
    diff = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    if grad_inputs is not None:
        diff = list(grad_inputs)
    grad = grad and bool(diff)

    ag_in = [
        ag.tensor(a, device=device, requires_grad=grad and i in diff) for i, a in enumerate(arrays)
    ]
    th_in = [torch.tensor(a, requires_grad=grad and i in diff) for i, a in enumerate(arrays)]
    ag_out, th_out = _outputs(fn(ag, *ag_in)), _outputs(fn(torch, *th_in))
    assert len(ag_out) == len(th_out)
    for a, t in zip(ag_out, th_out):
        assert tuple(a.shape) == tuple(t.shape), f"shape {tuple(a.shape)} != torch {tuple(t.shape)}"
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (
            f"dtype {a.dtype} != torch {t.dtype}"
        )
        np.testing.assert_allclose(
            _to_numpy(a), t.detach().numpy(), atol=atol, rtol=rtol, err_msg="forward"
        )
    if not grad:
        return

    pairs = [(a, t) for a, t in zip(ag_out, th_out) if t.requires_grad]
    upstream = [rng.standard_normal(tuple(t.shape)).astype(dtype) for _, t in pairs]
    ag_g = [ag.tensor(u, device=device) for u in upstream]
    th_g = [torch.tensor(u) for u in upstream]
    ag_x = [ag_in[i] for i in diff]
    th_x = [th_in[i] for i in diff]
    ag_grads = ag.autograd.grad(
        [a for a, _ in pairs], ag_x, ag_g, create_graph=gradgrad, allow_unused=True
    )
    th_grads = torch.autograd.grad(
        [t for _, t in pairs], th_x, th_g, create_graph=gradgrad, allow_unused=True
    )
    for i, (a, t) in enumerate(zip(ag_grads, th_grads)):
        if t is None:
            assert a is None or np.all(_to_numpy(a) == 0), f"input {i}: torch has no gradient"
            continue
        assert a is not None, f"input {i}: no gradient, torch has one"
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (
            f"grad dtype {a.dtype} != {t.dtype}"
        )
        np.testing.assert_allclose(
            _to_numpy(a), _to_numpy(t), atol=atol, rtol=rtol, err_msg=f"grad of input {i}"
        )
    if not gradgrad:
        return

    live = [i for i, t in enumerate(th_grads) if t is not None and t.requires_grad]
    if not live:
        return
    vs = [rng.standard_normal(tuple(th_grads[i].shape)).astype(dtype) for i in live]
    ag_s = sum(
        ((ag_grads[i] * ag.tensor(v, device=device)).sum() for i, v in zip(live, vs)),
        ag.tensor(0.0, dtype=dtype, device=device),
    )
    th_s = sum(
        ((th_grads[i] * torch.tensor(v)).sum() for i, v in zip(live, vs)),
        torch.tensor(0.0, dtype=getattr(torch, dtype)),
    )
    ag_gg = (
        ag.autograd.grad(ag_s, ag_x, allow_unused=True)
        if ag_s.requires_grad
        else [None] * len(ag_x)
    )
    th_gg = torch.autograd.grad(th_s, th_x, allow_unused=True)
    for i, (a, t) in enumerate(zip(ag_gg, th_gg)):
        if t is None:
            assert a is None or np.allclose(_to_numpy(a), 0), (
                f"input {i}: torch has no second-order gradient"
            )
            continue
        expected = _to_numpy(t)
        if a is None:  # no path in our graph: torch's must then be identically zero
            assert np.all(expected == 0), f"input {i}: no second-order gradient, torch has one"
            continue
        np.testing.assert_allclose(
            _to_numpy(a),
            expected,
            atol=atol * 10,
            rtol=rtol * 10,
            err_msg=f"grad-of-grad of input {i}",
        )
