"""The fast paths of fused ops give bit-for-bit what their general paths give."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag

F = ag.nn.functional


LOSSES = ["cross_entropy", "nll_loss"]


def _loss(name: str, x: np.ndarray, t: np.ndarray, **kw: object) -> tuple[np.ndarray, np.ndarray]:
    xt = ag.tensor(x, requires_grad=True)
    loss = getattr(F, name)(xt, ag.tensor(t), **kw)
    loss.backward()
    return loss._data, xt.grad._data


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_plain_class_losses_equal_the_general_path_bitwise(name: str, dtype: str) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((64, 10)) * 4).astype(dtype)
    t = rng.integers(0, 10, 64)
    t[:2] = (0, 9)  # the first and the last class: just inside the range
    plain = _loss(name, x, t)
    general = _loss(name, x, t, weight=ag.ones(10, dtype=getattr(ag, dtype)))  # weighted path
    for a, b in zip(plain, general):
        assert a.dtype == np.dtype(dtype)
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("tdtype", ["int64", "int32", "uint8"])
def test_plain_class_losses_fall_back_for_ignored_and_out_of_range_targets(
    name: str, tdtype: str
) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5)).astype("float32")
    t = np.array([0, 4, 2, 2, 1, 3], dtype=tdtype)
    cases = [{"ignore_index": 2}, {"ignore_index": 5}]  # inside the classes, just outside
    if tdtype != "uint8":
        cases.append({"ignore_index": -100})
    for kw in cases:
        tt = t.copy()
        if kw["ignore_index"] < 0:
            tt[0] = -100
        ours = _loss(name, x, tt, **kw)
        xt = torch.tensor(x, requires_grad=True)
        loss = getattr(torch.nn.functional, name)(xt, torch.tensor(tt.astype("int64")), **kw)
        loss.backward()
        np.testing.assert_allclose(ours[0], loss.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(ours[1], xt.grad.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        _loss(name, x, np.array([0, 5, 2, 2, 1, 3], dtype=tdtype))  # just outside the range
    if tdtype != "uint8":
        with pytest.raises(IndexError, match="Target -1 is out of bounds"):
            _loss(name, x, np.array([0, -1, 2, 2, 1, 3], dtype=tdtype))  # just below it


@pytest.mark.parametrize("name", LOSSES)
def test_plain_class_losses_double_backward_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3))
    t = np.array([0, 2, 1, 2])
    xa = ag.tensor(x, requires_grad=True)
    (g,) = ag.autograd.grad(getattr(F, name)(xa, ag.tensor(t)) ** 2, xa, create_graph=True)
    (g * g).sum().backward()
    xt = torch.tensor(x, requires_grad=True)
    loss = getattr(torch.nn.functional, name)(xt, torch.tensor(t)) ** 2
    (gt,) = torch.autograd.grad(loss, xt, create_graph=True)
    (gt * gt).sum().backward()
    np.testing.assert_allclose(g._data, gt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(xa.grad._data, xt.grad.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_gradient_has_torchs_bits(weighted: bool) -> None:
    """-w_t / sum(w) at each target and +0.0 elsewhere (not -0.0), on both paths."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 4)).astype("float32")
    t = np.array([0, 3, 1, 1, 2])
    w = np.array([0.5, 1.0, 2.0, 3.0], dtype="float32") if weighted else None
    ours = _loss("nll_loss", x, t, weight=None if w is None else ag.tensor(w))[1]
    xt = torch.tensor(x, requires_grad=True)
    kw = {} if w is None else {"weight": torch.tensor(w)}
    torch.nn.functional.nll_loss(xt, torch.tensor(t), **kw).backward()
    assert ours.tobytes() == xt.grad.numpy().tobytes()


@pytest.mark.parametrize(
    ("shapes", "dim"),
    [([(2, 3), (2, 1), (2, 4)], 1), ([(3,), (0,), (2,)], 0), ([(0,), (4,)], 0), ([(1, 2)], 0)],
)
def test_cat_backward_without_a_graph_equals_the_split_path(shapes, dim) -> None:
    """cat's gradient pieces cut from the arrays (no graph) are Split's (create_graph)."""
    rng = np.random.default_rng(7)
    xs = [ag.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    out = ag.cat(xs, dim)
    g = ag.tensor(rng.standard_normal(tuple(out.shape)))
    plain = ag.autograd.grad(out, xs, g, retain_graph=True)
    split = ag.autograd.grad(out, xs, g, create_graph=True)
    for p, s, x in zip(plain, split, xs):  # a 1-D empty's gradient is empty, as torch's
        assert p.shape == x.shape and p._data.tobytes() == s._data.tobytes()


@pytest.mark.parametrize("i", [0, 2, -1, -3])
def test_int_index_equals_the_general_key_path(i: int) -> None:
    """``x[i]`` (the int fast path) is ``x[np.int64(i)]`` (the general key path): a view, the
    same values, grad_fn name and gradient; just past either end, torch's IndexError."""
    x = ag.arange(12.0).reshape(3, 4).requires_grad_()
    fast, general = x[i], x[np.int64(i)]
    assert fast._data.tobytes() == general._data.tobytes() and fast.shape == (4,)
    assert type(fast.grad_fn).__name__ == type(general.grad_fn).__name__ == "SelectBackward0"
    assert np.shares_memory(fast._data, x._data)
    (ga,) = ag.autograd.grad(fast.sum(), x)
    (gb,) = ag.autograd.grad(general.sum(), x)
    assert ga._data.tobytes() == gb._data.tobytes()
    for bad in (3, -4):
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds for dimension 0"):
            x[bad]


@pytest.mark.parametrize(
    ("shape", "target"),
    [((), (2, 3)), ((1,), (4,)), ((3, 1), (2, 3, 5)), ((1, 4), (3, -1)), ((2, 1), (3, 2, 1))],
)
def test_expand_view_equals_numpys_broadcast_to(shape, target) -> None:
    """The broadcast view built directly (C-contiguous input) is numpy's broadcast_to: shape,
    strides, values, read-only, sharing the input's memory; a transposed input takes numpy's."""
    x = ag.tensor(np.arange(float(np.prod(shape))).reshape(shape))
    lead = len(target) - len(shape)
    full = tuple(shape[i - lead] if s == -1 else s for i, s in enumerate(target))
    cases = [(x, target, full)]
    if x.ndim == 2:  # not C-contiguous: numpy's broadcast_to
        cases.append((x.t(), (4, *x.t().shape), (4, *x.t().shape)))
    for t, to, want in cases:
        got = t.expand(*to)._data
        ref = np.broadcast_to(t._data, want)
        assert got.shape == ref.shape and got.strides == ref.strides
        assert not got.flags.writeable and np.shares_memory(got, t._data)
        np.testing.assert_array_equal(got, ref)


def test_expand_refuses_what_broadcast_to_refuses() -> None:
    x = ag.zeros(2, 3)
    for bad in ((2, 4), (3, 3), (4, 2, 2)):  # a non-singleton dim changed: just off either way
        with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(\[\d"):
            x.expand(*bad)
    with pytest.raises(RuntimeError, match="must be greater or equal to"):
        x.expand(3)


@pytest.mark.parametrize("n", [0, 4, 5, -3, -4, 6.0, 7.0, 10])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_integer_power_is_numpys_power_within_an_ulp(n: float, dtype: str) -> None:
    """``x ** n`` for an integer-valued n (|x| ** n, signed for odd n) against numpy's power of
    the same array: positive bases bit for bit, the rest within 1 ulp; -0.0, inf and nan exact."""
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(4096) * 3).astype(dtype)
    x[:6] = [-0.0, 0.0, np.inf, -np.inf, np.nan, -1.0]
    with np.errstate(all="ignore"):
        want = np.power(x, n)
        got = (ag.tensor(x) ** n)._data
    assert got.dtype == np.dtype(dtype)
    pos = x > 0
    assert got[pos].tobytes() == want[pos].tobytes()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(
        np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)])
    )
    np.testing.assert_array_max_ulp(got[~np.isnan(got)], want[~np.isnan(want)], maxulp=1)


@pytest.mark.parametrize(
    ("kernel", "stride", "pad", "dilation"),
    [((3, 3), (2, 2), (1, 1, 1, 1), (1, 1)), ((4, 4), (2, 2), (1, 1, 1, 1), (1, 1)),
     ((3, 2), (2, 3), (0, 2, 1, 0), (1, 1)), ((3, 3), (3, 3), (1, 1, 1, 1), (2, 2)),
     ((1, 1), (2, 2), (0, 0, 0, 0), (1, 1))],
)  # fmt: skip
def test_col2im_pixel_major_equals_col2im(kernel, stride, pad, dilation) -> None:
    """The pixel-major scatter gives col2im's sums, from the same columns in the other order."""
    from autogradcli.ops.im2col import _out_hw, col2im, col2im_pixel_major

    shape = (3, 2, 9, 8)
    ho, wo = _out_hw(9, 8, kernel, stride, pad, dilation)
    taps = 2 * kernel[0] * kernel[1]
    cols = np.random.default_rng(9).standard_normal((taps, 3, ho, wo))  # (C*kh*kw, N, Ho, Wo)
    want = col2im(cols.reshape(taps, -1), shape, kernel, stride, pad, dilation)
    pixel_major = np.ascontiguousarray(cols.transpose(0, 2, 3, 1)).reshape(taps, -1)
    got = col2im_pixel_major(pixel_major, shape, kernel, stride, pad, dilation)
    assert got.shape == shape and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize(("hw", "stride"), [(14, 2), (15, 2), (16, 2), (9, 3)])
def test_strided_conv_input_gradient_matches_torch(monkeypatch, hw: int, stride: int) -> None:
    """A strided conv's input gradient, torch's on both paths: pixel-major under 64 output
    pixels an image (14 -> 7x7, 9 -> 3x3), col2im from 64 on (15 -> 8x8 just at it, 16)."""
    torch = pytest.importorskip("torch")
    from autogradcli.ops import convolution

    used = []
    real = convolution.col2im_pixel_major
    monkeypatch.setattr(convolution, "col2im_pixel_major", lambda *a: used.append(1) or real(*a))
    rng = np.random.default_rng(10)
    x = rng.standard_normal((4, 3, hw, hw)).astype("float32")
    w = rng.standard_normal((5, 3, 3, 3)).astype("float32")
    xa, wa = ag.tensor(x, requires_grad=True), ag.tensor(w, requires_grad=True)
    ya = F.conv2d(xa, wa, stride=stride, padding=1)
    g = rng.standard_normal(tuple(ya.shape)).astype("float32")
    ya.backward(ag.tensor(g))
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    torch.nn.functional.conv2d(xt, wt, stride=stride, padding=1).backward(torch.tensor(g))
    np.testing.assert_allclose(xa.grad._data, xt.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(wa.grad._data, wt.grad.numpy(), rtol=1e-5, atol=1e-4)
    assert bool(used) == (ya.shape[2] * ya.shape[3] < 64)
