"""PyTorch as the oracle: run the same function on autogradcli and torch from identical data and
compare the forward, the gradients and the second-order gradients.

    check(lambda m, x, y: m.maximum(x, y), (3, 1, 4), (5, 1))

``fn(m, *tensors)`` receives the library module (``autogradcli`` or ``torch``) first, so one
lambda serves both. Inputs are shapes (random data) or arrays.

With ``device="cpu"`` (the default) the same comparison also runs on ``device="cuda"`` backed by
the strict cupy stand-in (``strict_xp.py``): an op that calls numpy on a device array fails
there. ``m`` is then a view of autogradcli whose creation functions default to that device.
Set ``AGRAD_NO_STRICT=1`` to skip the second pass. With ``AGRAD_REAL_CUDA=1`` on a machine with
cupy and a GPU, the second pass runs on the real device instead (``strict_xp.device_pass``).
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from lazy_torch import torch
from strict_xp import device_pass, real_cuda_requested

import autogradcli as ag
from autogradcli.backend import registry

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


# Creation functions that get ``device=`` by default in the strict pass, so a lambda's own
# ``m.tensor([1, 0, 1])`` lands on the device like its inputs.
_FACTORIES = [
    "tensor",
    "as_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "arange",
    "linspace",
    "eye",
    "randn",
    "rand",
    "randint",
    "randperm",
]
_real_cupy: bool | None = None


def _real_cupy_active() -> bool:
    global _real_cupy
    if _real_cupy is None:
        cuda = registry._cuda
        if cuda is not None:
            _real_cupy = getattr(cuda, "__name__", "") == "cupy"
        else:
            try:
                import cupy  # noqa: F401
            except ImportError:
                _real_cupy = False
            else:
                _real_cupy = ag.cuda.is_available()
    return _real_cupy


def strict_enabled() -> bool:
    """Whether ``check`` adds the strict stand-in pass."""
    if os.environ.get("AGRAD_NO_STRICT", "") in ("1", "true", "yes"):
        return False
    return real_cuda_requested() or not _real_cupy_active()


def on_device(device: str) -> Any:
    """``autogradcli`` seen as a module whose creation functions default to ``device``."""
    mod = types.ModuleType(f"autogradcli[{device}]")
    mod.__dict__.update({k: v for k, v in vars(ag).items() if not k.startswith("__")})

    def factory(fn: Callable[..., Any]) -> Callable[..., Any]:
        def on(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("device") is None:
                kwargs["device"] = device
            return fn(*args, **kwargs)

        return on

    for name in _FACTORIES:
        setattr(mod, name, factory(getattr(ag, name)))
    return mod


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
    """Assert autogradcli matches torch on forward, backward and double backward of ``fn``.

    On the CPU this also runs on the strict cupy stand-in (see the module docstring).
    """
    rng = np.random.default_rng(seed)
    arrays = _as_arrays(inputs, dtype, rng)
    default_atol, default_rtol = TOL.get(dtype, (1e-6, 1e-5))
    atol = default_atol if atol is None else atol
    rtol = default_rtol if rtol is None else rtol
    diff = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    if grad_inputs is not None:
        diff = list(grad_inputs)
    grad = grad and bool(diff)
    ref = _torch_reference(fn, arrays, diff, grad, gradgrad, dtype, rng)
    tol = (atol, rtol)
    _compare(fn, ag, arrays, diff, grad, gradgrad, dtype, device, tol, ref)
    if device != "cpu" or not strict_enabled():
        return
    with device_pass() as xp:
        try:
            _compare(fn, on_device("cuda"), arrays, diff, grad, gradgrad, dtype, "cuda", tol, ref)
        except Exception as err:
            err.add_note(
                f"(this failed on device='cuda' backed by {xp.__name__} after passing on the CPU: "
                "look for numpy called on a device array, or host and device arrays mixed; "
                "AGRAD_NO_STRICT=1 skips this pass)"
            )
            raise


def _torch_reference(
    fn: Callable[..., Any],
    arrays: list[np.ndarray],
    diff: list[int],
    grad: bool,
    gradgrad: bool,
    dtype: str,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """torch's forward, gradients and second-order gradients, with the random cotangents used."""
    th_in = [torch.tensor(a, requires_grad=grad and i in diff) for i, a in enumerate(arrays)]
    th_out = _outputs(fn(torch, *th_in))
    ref: dict[str, Any] = {"out": th_out}
    if not grad:
        return ref
    th_pairs = [t for t in th_out if t.requires_grad]
    upstream = [rng.standard_normal(tuple(t.shape)).astype(dtype) for t in th_pairs]
    th_x = [th_in[i] for i in diff]
    th_grads = torch.autograd.grad(
        th_pairs,
        th_x,
        [torch.tensor(u) for u in upstream],
        create_graph=gradgrad,
        allow_unused=True,
    )
    ref.update(upstream=upstream, grads=th_grads)
    if not gradgrad:
        return ref
    live = [i for i, t in enumerate(th_grads) if t is not None and t.requires_grad]
    ref["live"] = live
    if not live:
        return ref
    vs = [rng.standard_normal(tuple(th_grads[i].shape)).astype(dtype) for i in live]
    th_s = sum(
        ((th_grads[i] * torch.tensor(v)).sum() for i, v in zip(live, vs)),
        torch.tensor(0.0, dtype=getattr(torch, dtype)),
    )
    ref.update(vs=vs, gg=torch.autograd.grad(th_s, th_x, allow_unused=True))
    return ref


def _compare(
    fn: Callable[..., Any],
    m: Any,
    arrays: list[np.ndarray],
    diff: list[int],
    grad: bool,
    gradgrad: bool,
    dtype: str,
    device: str,
    tol: tuple[float, float],
    ref: dict[str, Any],
) -> None:
    """Run ``fn`` on autogradcli (module ``m``) on ``device`` and compare with torch's ``ref``."""
    atol, rtol = tol
    ag_in = [
        ag.tensor(a, device=device, requires_grad=grad and i in diff) for i, a in enumerate(arrays)
    ]
    ag_out, th_out = _outputs(fn(m, *ag_in)), ref["out"]
    assert len(ag_out) == len(th_out)
    for a, t in zip(ag_out, th_out):
        assert tuple(a.shape) == tuple(t.shape), f"shape {tuple(a.shape)} != torch {tuple(t.shape)}"
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (
            f"dtype {a.dtype} != torch {t.dtype}"
        )
        assert a.device.type == device.split(":")[0], f"output on {a.device}, inputs on {device}"
        np.testing.assert_allclose(
            _to_numpy(a), t.detach().numpy(), atol=atol, rtol=rtol, err_msg="forward"
        )
    if not grad:
        return

    pairs = [a for a, t in zip(ag_out, th_out) if t.requires_grad]
    ag_g = [ag.tensor(u, device=device) for u in ref["upstream"]]
    ag_x = [ag_in[i] for i in diff]
    ag_grads = ag.autograd.grad(pairs, ag_x, ag_g, create_graph=gradgrad, allow_unused=True)
    for i, (a, t) in enumerate(zip(ag_grads, ref["grads"])):
        if t is None:
            assert a is None or np.all(_to_numpy(a) == 0), f"input {i}: torch has no gradient"
            continue
        assert a is not None, f"input {i}: no gradient, torch has one"
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (
            f"grad dtype {a.dtype} != {t.dtype}"
        )
        assert a.device.type == device.split(":")[0], f"grad on {a.device}, input on {device}"
        np.testing.assert_allclose(
            _to_numpy(a), _to_numpy(t), atol=atol, rtol=rtol, err_msg=f"grad of input {i}"
        )
    if not gradgrad or not ref.get("live"):
        return

    live = ref["live"]
    ag_s = sum(
        ((ag_grads[i] * ag.tensor(v, device=device)).sum() for i, v in zip(live, ref["vs"])),
        ag.tensor(0.0, dtype=dtype, device=device),
    )
    ag_gg = (
        ag.autograd.grad(ag_s, ag_x, allow_unused=True)
        if ag_s.requires_grad
        else [None] * len(ag_x)
    )
    for i, (a, t) in enumerate(zip(ag_gg, ref["gg"])):
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
