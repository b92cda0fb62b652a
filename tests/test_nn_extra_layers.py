"""Channel dropout, transposed convolution and padding against PyTorch: functional forms
(forward, grads, grad-of-grad, also on the strict cupy stand-in), the layers (reprs, init,
state_dict names and shapes, outputs and gradients with torch's weights) and torch's errors."""

import warnings

import numpy as np
import pytest
from module_oracle import compare_module, state_shapes

import autogradcli as ag
import autogradcli.nn as nn
import autogradcli.nn.functional as F


def _check(*args, **kw):
    from oracle import check  # imports torch: only in the tests that compare with it

    check(*args, **kw)


def _fn(name, **kw):
    def fn(m, *xs):
        mod = m.nn.functional if m.__name__ == "torch" else F
        return getattr(mod, name)(*xs, **kw)

    return fn


# ---- channel dropout -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, shape, axes",
    [
        ("dropout1d", (8, 16, 5), (2,)),
        ("dropout1d", (16, 5), (1,)),
        ("dropout2d", (8, 16, 3, 4), (2, 3)),
        ("dropout3d", (4, 16, 2, 3, 2), (2, 3, 4)),
        ("dropout3d", (16, 2, 3, 2), (1, 2, 3)),
    ],
)
def test_channel_dropout_masks_whole_channels(name, shape, axes):
    ag.manual_seed(0)
    x = ag.rand(*shape) + 1.0  # no zeros in the input
    out = getattr(F, name)(x, 0.3)
    kept = out.numpy() != 0
    # every channel map is either all kept or all dropped
    assert np.all(kept.all(axis=axes) | (~kept).all(axis=axes))
    np.testing.assert_allclose(out.numpy()[kept], x.numpy()[kept] / 0.7, rtol=1e-6)
    assert out.dtype == ag.float32


def test_channel_dropout_rate_and_scale():
    ag.manual_seed(1)
    x = ag.ones(200, 100, 3)
    out = F.dropout1d(x, 0.25).numpy()
    frac = (out[:, :, 0] == 0).mean()
    # 20000 Bernoulli(0.25) channels: std 0.0031, so 4 sigma is 0.0123
    assert abs(frac - 0.25) < 0.0123
    assert np.isclose(out.mean(), 1.0, atol=0.02)  # the 1/(1-p) scale keeps the mean


def test_channel_dropout_gradient_is_the_mask():
    ag.manual_seed(2)
    x = ag.randn(4, 6, 5, 5, requires_grad=True)
    out = F.dropout2d(x, 0.5)
    out.sum().backward()
    mask = out.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), mask, rtol=1e-6)
    assert set(np.unique(np.round(mask, 6))) <= {0.0, 2.0}
    assert type(out.grad_fn).__name__ == "MulBackward0"


def test_channel_dropout_edges_and_eval():
    x = ag.randn(2, 3, 4)
    assert F.dropout1d(x, 0.5, training=False) is x
    assert F.dropout1d(x, 0.0) is x
    assert not F.dropout1d(x, 1.0).numpy().any()
    layer = nn.Dropout1d(0.5).eval()
    assert layer(x) is x
    y = ag.ones(2, 8, 3)
    z = F.dropout1d(y, 0.5, inplace=True)
    assert z is y and set(np.unique(y.numpy())) <= {0.0, 2.0}
    u = ag.ones(8, 3)  # unbatched, in place
    assert F.dropout1d(u, 0.5, inplace=True) is u and set(np.unique(u.numpy())) <= {0.0, 2.0}


def test_channel_dropout_errors_and_warnings():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    for p in (-0.1, 1.1):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            F.dropout2d(ag.randn(2, 3, 4, 4), p)
        with pytest.raises(ValueError, match="between 0 and 1"):
            nn.Dropout3d(p)
    for bad in [(3,), (1, 2, 3, 4)]:
        with pytest.raises(RuntimeError) as ours:
            F.dropout1d(ag.randn(*bad))
        with pytest.raises(RuntimeError) as theirs:
            TF.dropout1d(torch.randn(*bad))
        assert str(ours.value) == str(theirs.value)
    for name, shape in [("dropout2d", (2, 3, 4)), ("dropout2d", (2, 3)), ("dropout3d", (2, 3))]:
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            getattr(F, name)(ag.randn(*shape))
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            getattr(TF, name)(torch.randn(*shape))
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
        assert ours and ours[0].filename == __file__  # points at the caller


def test_channel_dropout_on_strict_device(strict_cuda):
    ag.manual_seed(0)
    x = ag.randn(4, 5, 3, device="cuda", requires_grad=True)
    out = F.dropout1d(x, 0.5)
    out.sum().backward()
    assert out.device.type == "cuda" and x.grad.device.type == "cuda"


def test_channel_dropout_reprs():
    torch = pytest.importorskip("torch")
    for name in ("Dropout1d", "Dropout2d", "Dropout3d"):
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())
        assert repr(getattr(nn, name)(0.2, True)) == repr(getattr(torch.nn, name)(0.2, True))
        assert not isinstance(getattr(nn, name)(), nn.Dropout)


# ---- transposed convolution ------------------------------------------------------------------

CONVT2D = [
    ((2, 3, 5, 4), (3, 4, 3, 3), {}),
    ((2, 3, 5, 4), (3, 4, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((1, 4, 4, 5), (4, 3, 3, 3), {"stride": (2, 3), "dilation": (1, 2), "groups": 2}),
    ((2, 4, 3, 3), (4, 1, 3, 3), {"padding": 1, "groups": 4}),
    ((2, 2, 4, 4), (2, 3, 2, 2), {"stride": 2}),
    ((2, 2, 4, 4), (2, 3, 3, 3), {"stride": 3, "padding": (0, 1), "output_padding": (2, 1)}),
    ((2, 2, 3, 4), (2, 2, 3, 3), {"dilation": 2, "output_padding": 1}),  # op < dilation
    ((2, 2, 3, 4), (2, 2, 1, 1), {"stride": 2, "padding": 1}),
    ((3, 5, 4), (3, 2, 3, 3), {"padding": 1}),  # unbatched
]


@pytest.mark.parametrize("x, w, kw", CONVT2D, ids=[str(c[2]) for c in CONVT2D])
def test_conv_transpose2d(x, w, kw):
    out_channels = w[1] * kw.get("groups", 1)
    _check(_fn("conv_transpose2d", **kw), x, w, (out_channels,))


def test_conv_transpose2d_no_bias_float32():
    _check(
        _fn("conv_transpose2d", stride=2, padding=1), (2, 3, 4, 4), (3, 2, 3, 3), dtype="float32"
    )


@pytest.mark.parametrize(
    "kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1}, {"dilation": 2, "groups": 2}]
)
def test_conv_transpose1d(kw):
    g = kw.get("groups", 1)
    _check(_fn("conv_transpose1d", **kw), (2, 4, 6), (4, 6 // g, 3), (6,))
    _check(_fn("conv_transpose1d", **kw), (4, 6), (4, 6 // g, 3))


def test_conv_transpose_errors_match_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    cases = [
        ((2, 5, 7, 6), (4, 3, 3, 3), {}),
        ((2, 4, 7, 6), (4, 3, 3, 3), {"output_padding": 1}),
        ((2, 4, 7, 6), (4, 3, 3, 3), {"stride": 2, "output_padding": 2}),
        ((4, 7), (4, 3, 3, 3), {}),
        ((2, 4, 7, 6), (4, 3, 3, 3), {"groups": 3}),
        ((2, 4, 7, 6), (4, 3, 3, 3), {"padding": -1}),
    ]
    for x, w, kw in cases:
        with pytest.raises(RuntimeError) as theirs:
            TF.conv_transpose2d(torch.randn(*x), torch.randn(*w), **kw)
        with pytest.raises(RuntimeError) as ours:
            F.conv_transpose2d(ag.randn(*x), ag.randn(*w), **kw)
        assert str(ours.value) == str(theirs.value)
    # just inside the output_padding limit: stride 2 allows 1
    assert F.conv_transpose2d(
        ag.randn(1, 4, 3, 3), ag.randn(4, 3, 3, 3), stride=2, output_padding=1
    ).shape == (1, 3, 8, 8)


CONVT_LAYERS = [
    (lambda m: m.ConvTranspose2d(4, 6, 3), (2, 4, 5, 5)),
    (
        lambda m: m.ConvTranspose2d(
            4,
            6,
            (3, 2),
            stride=2,
            padding=1,
            output_padding=1,
            groups=2,
            dilation=(2, 1),
            bias=False,
        ),
        (2, 4, 5, 4),
    ),
    (lambda m: m.ConvTranspose1d(3, 5, 4, stride=2, padding=1), (2, 3, 7)),
]


@pytest.mark.parametrize("make, shape", CONVT_LAYERS)
def test_conv_transpose_layers_match_torch(make, shape):
    ours, theirs = compare_module(make, shape, dtype="float32")
    assert repr(ours) == repr(theirs)
    assert state_shapes(ours) == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}


def test_conv_transpose_output_size_and_init():
    torch = pytest.importorskip("torch")
    make = lambda m: m.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2)
    for size in ([9, 9], [10, 10], [1, 6, 10, 9]):
        compare_module(make, (1, 4, 5, 5), call=lambda layer, x, s=size: layer(x, output_size=s))
    for size in ([8, 9], [9, 11]):  # just outside the valid range [9, 10]
        with pytest.raises(ValueError) as theirs:
            make(torch.nn)(torch.randn(1, 4, 5, 5), output_size=size)
        with pytest.raises(ValueError) as ours:
            make(nn)(ag.randn(1, 4, 5, 5), output_size=size)
        assert str(ours.value) == str(theirs.value).replace("torch.", "autogradcli.")
    ag.manual_seed(0)
    layer = nn.ConvTranspose2d(4, 64, 3, groups=2)
    assert layer.weight.shape == (4, 32, 3, 3) and layer.weight.dtype == ag.float32
    bound = 1 / (32 * 9) ** 0.5  # fan_in is weight.size(1) * k * k, as torch
    for p in (layer.weight, layer.bias):
        a = np.abs(p.detach().numpy())
        assert a.max() <= bound and a.max() > 0.8 * bound
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
        nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect")


def test_autoencoder_matches_torch():
    def make(m):
        return m.Sequential(
            m.Conv2d(1, 4, 3, stride=2, padding=1),
            m.ReLU(),
            m.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
            m.Sigmoid(),
        )

    compare_module(make, (3, 1, 8, 8), dtype="float32")


# ---- F.pad -----------------------------------------------------------------------------------

PADS = [
    ("constant", (2, 3, 4), (1, 2)),
    ("constant", (2, 3, 4), (1, 0, 2, 1, 0, 1)),
    ("constant", (2, 3, 4), (-1, 2, 1, -2)),
    ("reflect", (2, 3, 5), (2, 1)),
    ("reflect", (2, 3, 4, 5), (1, 2, 3, 1)),
    ("reflect", (3, 4, 5), (2, 2, 1, 0)),
    ("reflect", (2, 4, 5), (-1, 2)),
    ("replicate", (2, 3, 4), (3, 1)),
    ("replicate", (2, 3, 4, 5), (1, 2, 4, 0)),
    ("replicate", (1, 2, 3, 3, 4), (1, 1, 0, 2, 1, 0)),
    ("circular", (2, 3, 4), (2, 4)),
    ("circular", (2, 3, 4, 5), (1, 2, 3, 0)),
]


@pytest.mark.parametrize("mode, shape, pad", PADS, ids=[f"{p[0]}{p[2]}" for p in PADS])
def test_pad(mode, shape, pad):
    _check(_fn("pad", pad=pad, mode=mode), shape)


def test_pad_value_and_dtypes():
    _check(_fn("pad", pad=(1, 1), value=2.5), (2, 3), dtype="float32")
    x = ag.tensor([[1, 2], [3, 4]])
    out = F.pad(x, (1, 0), value=7)
    assert out.dtype == ag.int64 and out.tolist() == [[7, 1, 2], [7, 3, 4]]


def test_pad_errors_match_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    cases = [
        ((1, 2, 3), (3, 3), "reflect", None),
        ((1, 2, 3), (1, 1, 1, 1, 1, 1), "reflect", None),
        ((3,), (1, 1), "reflect", None),
        ((1, 2, 3), (1,), "constant", None),
        ((1, 2, 3), (1,) * 8, "constant", None),
        ((1, 2, 3), (1, 1), "foo", None),
        ((1, 2, 3), (1, 1), "replicate", 2.0),
        ((1, 2, 3), (0, 4), "circular", None),
        ((1, 2, 3), (-4, 1), "constant", None),
    ]
    for shape, pad, mode, value in cases:
        with pytest.raises(Exception) as theirs:
            TF.pad(torch.randn(*shape), pad, mode=mode, value=value)
        with pytest.raises(Exception) as ours:
            F.pad(ag.randn(*shape), pad, mode=mode, value=value)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)
    # just inside the limits: reflect pad size - 1, circular pad size
    assert F.pad(ag.randn(1, 2, 3), (2, 2), mode="reflect").shape == (1, 2, 7)
    assert F.pad(ag.randn(1, 2, 3), (3, 3), mode="circular").shape == (1, 2, 9)


PAD_LAYERS = [
    (lambda m: m.ZeroPad2d(1), (2, 3, 4, 5)),
    (lambda m: m.ZeroPad1d((1, 2)), (2, 3, 4)),
    (lambda m: m.ConstantPad1d(2, 3.5), (2, 3, 4)),
    (lambda m: m.ConstantPad3d((1, 0, 0, 1, 2, 0), -1.0), (1, 2, 2, 3, 2)),
    (lambda m: m.ReflectionPad1d(2), (2, 3, 4)),
    (lambda m: m.ReflectionPad2d((1, 2, 3, 0)), (2, 3, 4, 5)),
    (lambda m: m.ReplicationPad2d(2), (3, 4, 5)),
    (lambda m: m.ReplicationPad3d(1), (1, 2, 2, 3, 2)),
    (lambda m: m.CircularPad1d(1), (2, 3, 4)),
    (lambda m: m.CircularPad2d((1, 2, 0, 1)), (2, 3, 4, 5)),
    (lambda m: m.ReflectionPad3d(1), (1, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("make, shape", PAD_LAYERS)
def test_padding_layers_match_torch(make, shape):
    ours, theirs = compare_module(make, shape, dtype="float32")
    assert repr(ours) == repr(theirs)


def test_padding_layer_errors_match_torch():
    torch = pytest.importorskip("torch")
    for make, shape in [
        (lambda m: m.ReflectionPad2d(2), (2, 2)),
        (lambda m: m.ZeroPad2d(2), (2,)),
        (lambda m: m.CircularPad2d(2), (2, 3)),
    ]:
        with pytest.raises(Exception) as theirs:
            make(torch.nn)(torch.randn(*shape))
        with pytest.raises(Exception) as ours:
            make(nn)(ag.randn(*shape))
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)
