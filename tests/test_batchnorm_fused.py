"""The fused batch-norm Function (nn/functional/batch_norm_fused.py) against PyTorch and against
the composition of Tensor ops it replaced: values, gradients, grad-of-grad, running statistics."""

import numpy as np
import pytest
from lazy_torch import torch
from oracle import check

import autogradcli as ag
import autogradcli.nn.functional as F

TF = torch.nn.functional


def _lib(m):
    return TF if m is torch else F


def _composed(x, w, b, eps):
    """The general path: batch norm written in differentiable Tensor ops."""
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    c = x - x.mean(dims, keepdim=True)
    out = c * ((c * c).mean(dims, keepdim=True) + eps).rsqrt()
    return out * w.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("shape", [(2, 3), (7, 4, 1), (2, 3, 5, 4), (1, 2, 1, 3)])
def test_fused_matches_torch(shape):
    c = shape[1]
    check(
        lambda m, x, w, b: _lib(m).batch_norm(x, None, None, w, b, training=True),
        shape,
        (c,),
        (c,),
    )


def test_no_affine_and_non_contiguous_input():
    check(lambda m, x: _lib(m).batch_norm(x.transpose(0, 2), None, None, training=True), (5, 3, 4))


def test_weight_without_bias():
    check(lambda m, x, w: _lib(m).batch_norm(x, None, None, w, None, True), (4, 3, 2), (3,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_matches_composition(dtype):
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal(s).astype(dtype) for s in [(6, 3, 4, 5), (3,), (3,), (6, 3, 4, 5)]
    ]
    grads = []
    for fn in (lambda x, w, b: F.batch_norm(x, None, None, w, b, True), _composed_eps):
        x, w, b = (ag.tensor(a, requires_grad=True) for a in arrays[:3])
        out = fn(x, w, b)
        assert out.dtype == x.dtype
        out.backward(ag.tensor(arrays[3]))
        grads.append([out.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()])
    tol = 1e-5 if dtype == "float32" else 1e-12
    for fused, general in zip(*grads):
        np.testing.assert_allclose(fused, general, rtol=tol, atol=tol)


def _composed_eps(x, w, b):
    return _composed(x, w, b, 1e-5)


def test_only_some_inputs_require_grad():
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((4, 3, 5)).astype("float32")
    x, w, b = ag.tensor(xa), ag.ones(3, requires_grad=True), ag.zeros(3)
    tx, tw = torch.tensor(xa), torch.ones(3, requires_grad=True)
    F.batch_norm(x, None, None, w, b, True).pow(2).sum().backward()
    TF.batch_norm(tx, None, None, tw, torch.zeros(3), True).pow(2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert x.grad is None and b.grad is None


def test_float32_large_mean_keeps_accuracy():
    """A mean far above the spread: the variance of shifted data stays float32-accurate (within
    the float32 rounding of the inputs themselves, as torch's)."""
    xa = (np.random.default_rng(2).standard_normal((64, 4, 8, 8)) * 0.01 + 1000).astype("float32")
    x64 = xa.astype("float64")
    mean = x64.mean((0, 2, 3), keepdims=True)
    truth = (x64 - mean) / np.sqrt(x64.var((0, 2, 3), keepdims=True) + 1e-5)
    out = F.batch_norm(ag.tensor(xa), None, None, training=True).numpy()
    ref = TF.batch_norm(torch.tensor(xa), None, None, training=True).numpy()
    assert np.abs(out - truth).max() <= max(2 * np.abs(ref - truth).max(), 1e-3)


@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_running_stats_as_torch(momentum):
    rng = np.random.default_rng(3)
    rm, rv = ag.zeros(3), ag.ones(3)
    trm, trv = torch.zeros(3), torch.ones(3)
    for _ in range(3):
        xa = (rng.standard_normal((5, 3, 4)) * 2 + 1).astype("float32")
        F.batch_norm(ag.tensor(xa), rm, rv, training=True, momentum=momentum)
        TF.batch_norm(torch.tensor(xa), trm, trv, training=True, momentum=momentum)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-5, atol=1e-6)


def test_grad_fn_name_and_one_value_error():
    x = ag.randn(4, 3, requires_grad=True)
    assert type(F.batch_norm(x, None, None, training=True).grad_fn).__name__ == (
        "NativeBatchNormBackward0"
    )
    with pytest.raises(ValueError, match="more than 1 value"):
        F.batch_norm(ag.randn(1, 3), None, None, training=True)


def test_double_backward_through_create_graph():
    check(
        lambda m, x, w: _lib(m).batch_norm(x, None, None, w, None, True).pow(2).sum(),
        (3, 2, 4),
        (2,),
    )


# group norm: the fused GroupNormFn (nn/functional/group_norm_fused.py)


@pytest.mark.parametrize(
    ("shape", "groups"), [((3, 4), 2), ((2, 6, 3, 2), 3), ((4, 4, 5), 4), ((1, 2, 1), 1)]
)
def test_group_norm_fused_matches_torch(shape, groups):
    c = shape[1]
    check(lambda m, x, w, b: _lib(m).group_norm(x, groups, w, b), shape, (c,), (c,))


def test_group_norm_no_affine_non_contiguous_and_weight_only():
    check(lambda m, x: _lib(m).group_norm(x.transpose(0, 2), 3), (5, 3, 4))
    check(lambda m, x, w: _lib(m).group_norm(x, 2, w), (3, 4, 2), (4,))


def test_group_norm_empty_batch():
    out = F.group_norm(ag.zeros(0, 4, 3), 2)
    assert tuple(out.shape) == (0, 4, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_group_norm_fused_matches_composition(dtype):
    rng = np.random.default_rng(5)
    arrays = [
        rng.standard_normal(s).astype(dtype) for s in [(3, 6, 4, 5), (6,), (6,), (3, 6, 4, 5)]
    ]
    grads = []
    for fused in (True, False):
        x, w, b = (ag.tensor(a, requires_grad=True) for a in arrays[:3])
        if fused:
            out = F.group_norm(x, 3, w, b)
        else:
            c = x.reshape(3, 3, -1) - x.reshape(3, 3, -1).mean(2, keepdim=True)
            xhat = (c * ((c * c).mean(2, keepdim=True) + 1e-5).rsqrt()).reshape(x.shape)
            out = xhat * w.reshape(1, 6, 1, 1) + b.reshape(1, 6, 1, 1)
        assert out.dtype == x.dtype
        out.backward(ag.tensor(arrays[3]))
        grads.append([out.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()])
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_group_norm_float32_large_mean():
    xa = (np.random.default_rng(6).standard_normal((8, 4, 16)) * 0.01 + 1000).astype("float32")
    x64 = xa.astype("float64").reshape(8, 2, -1)
    truth = (x64 - x64.mean(2, keepdims=True)) / np.sqrt(x64.var(2, keepdims=True) + 1e-5)
    out = F.group_norm(ag.tensor(xa), 2).numpy().reshape(8, 2, -1)
    ref = TF.group_norm(torch.tensor(xa), 2).numpy().reshape(8, 2, -1)
    assert np.abs(out - truth).max() <= max(2 * np.abs(ref - truth).max(), 1e-3)


def test_group_norm_grad_fn_name():
    out = F.group_norm(ag.randn(2, 4, 3, requires_grad=True), 2)
    assert type(out.grad_fn).__name__ == "NativeGroupNormBackward0"


# eval mode: BatchNormEval (x * scale + offset from the running statistics)

_RM = np.random.default_rng(7).standard_normal(3)
_RV = np.random.default_rng(8).random(3) + 0.5


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)])
def test_eval_fused_matches_torch(shape):
    check(
        lambda m, x, w, b: _lib(m).batch_norm(
            x, m.tensor(_RM, dtype=x.dtype), m.tensor(_RV, dtype=x.dtype), w, b, False
        ),
        shape,
        (3,),
        (3,),
    )


def test_eval_fused_no_affine_non_contiguous():
    check(
        lambda m, x: _lib(m).batch_norm(
            x.transpose(0, 2), m.tensor(_RM, dtype=x.dtype), m.tensor(_RV, dtype=x.dtype)
        ),
        (5, 3, 4),
    )


def test_eval_uses_fused_function_and_keeps_float32():
    x = ag.randn(4, 3, 2, requires_grad=True)
    out = F.batch_norm(x, ag.zeros(3), ag.ones(3), ag.ones(3), ag.zeros(3), False)
    assert type(out.grad_fn).__name__ == "NativeBatchNormBackward0"
    assert out.dtype == x.dtype == ag.float32


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_channel_sums_as_numpy(dtype):
    """Per-channel sums (a product with ones for float32/64, numpy's sum otherwise) keep the
    dtype and agree with a float64 sum; non-contiguous input too."""
    from autogradcli.nn.functional.batch_norm_fused import channel_sums

    a = (np.random.default_rng(3).standard_normal((5, 3, 40)) * 4).astype(dtype)
    for arr in (a, a[:, :, ::2]):
        got = channel_sums(np, arr)
        assert got.dtype == arr.dtype and got.shape == (3,)
        want = arr.astype(np.float64).sum(axis=(0, 2))
        tol = {"float16": 2e-2, "float32": 1e-5}.get(dtype, 1e-12)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * 10)


def test_per_channel_rows_threshold():
    """Per-channel operands spelled out as (C, S) rows up to _ROW_ELEMENTS, a (C, 1) column past
    it or when S is 1; either broadcasts to the same values."""
    from autogradcli.nn.functional import batch_norm_fused as bnf

    v = np.arange(4, dtype=np.float32)
    s = bnf._ROW_ELEMENTS // 4
    assert bnf._rows(np, v, s).shape == (4, s)  # just inside
    assert bnf._rows(np, v, s + 1).shape == (4, 1)  # just outside
    assert bnf._rows(np, v, 1).shape == (4, 1)
    np.testing.assert_array_equal(bnf._rows(np, v, 3), np.broadcast_to(v[:, None], (4, 3)))


@pytest.mark.parametrize("limit", [0, 1 << 16])
def test_fused_rows_or_columns_match_torch(monkeypatch, limit):
    """Training forward, backward and eval with the per-channel operands as columns (limit 0)
    and as rows: values and gradients as torch's."""
    from autogradcli.nn.functional import batch_norm_fused as bnf

    monkeypatch.setattr(bnf, "_ROW_ELEMENTS", limit)
    check(
        lambda m, x, w, b: _lib(m).batch_norm(x, None, None, w, b, True), (3, 2, 4, 5), (2,), (2,)
    )
    check(
        lambda m, x, w, b: _lib(m).batch_norm(
            x, m.tensor(_RM[:2], dtype=x.dtype), m.tensor(_RV[:2], dtype=x.dtype), w, b, False
        ),
        (3, 2, 4, 5),
        (2,),
        (2,),
    )


def test_fused_on_the_strict_device(strict_cuda):
    """Training forward and backward through the array seam only: the values the CPU gives."""
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3, 5), (3,), (3,)]]
    grads = []
    for device in ("cpu", "cuda"):
        x, w, b = (ag.tensor(a, device=device, requires_grad=True) for a in arrays)
        out = F.batch_norm(x, None, None, w, b, True)
        out.backward(ag.ones_like(out) * x.detach())
        grads.append([ag.backend.to_numpy(t._data) for t in (out, x.grad, w.grad, b.grad)])
    for cpu, dev in zip(*grads):
        np.testing.assert_allclose(dev, cpu, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("ratio, shifted", [(0.99, False), (1.01, True)])
def test_centred_shifts_only_when_the_mean_is_large(ratio, shifted):
    """The CPU sums the input itself while mean^2 <= _PLAIN_SUMS_RATIO * var in every channel
    (just inside) and shifts it by a pilot past that (just outside); both give float64's mean
    and variance."""
    from autogradcli.nn.functional.batch_norm_fused import _PLAIN_SUMS_RATIO, _centred

    x = np.tile(np.array([-1.0, 1.0], np.float32), (4, 2, 8))  # mean 0, var 1 per channel
    x[:, 1] += np.sqrt(ratio * _PLAIN_SUMS_RATIO)  # channel 1: mean^2 = ratio * limit * var
    c, pilot, shift, var = _centred(np, x)
    assert (c is not x) == shifted
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(pilot + shift, x64.mean((0, 2)), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(var, x64.var((0, 2)), rtol=1e-6)


def test_plain_sums_keep_the_variance_at_the_limit():
    """Just inside the limit, on a ResNet-sized batch of noise, the unshifted sums' variance is
    within 5e-6 of float64's (what the limit was chosen for; 16x the limit's ratio gives 1e-5)."""
    from autogradcli.nn.functional.batch_norm_fused import _PLAIN_SUMS_RATIO, _centred

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32, 256))
    x = (x - x.mean((0, 2), keepdims=True)) / x.std((0, 2), keepdims=True)  # mean 0, var 1
    x += np.sqrt(0.99 * _PLAIN_SUMS_RATIO)
    x = x.astype(np.float32)
    c, _, _, var = _centred(np, x)
    assert c is x
    np.testing.assert_allclose(var, x.astype(np.float64).var((0, 2)), rtol=5e-6)
