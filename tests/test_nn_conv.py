"""Convolution and pooling against PyTorch: functional forms (forward, grads, grad-of-grad) and
the Conv/Pool modules (reprs, default init, parameters copied from torch)."""

import numpy as np
import pytest
from lazy_torch import torch

TF = torch.nn.functional
from oracle import check

import autogradcli as ag
import autogradcli.nn.functional as F


def _fn(name, **kw):
    """One lambda for both libraries: F.<name>(x, ...) with keyword arguments."""

    def fn(m, *xs):
        mod = TF if m is torch else F
        return getattr(mod, name)(*xs, **kw)

    return fn


CONV2D = [
    ((2, 3, 7, 6), (4, 3, 3, 3), {}),
    ((2, 3, 7, 6), (4, 3, 3, 2), {"stride": 2, "padding": 1}),
    ((1, 4, 9, 8), (6, 2, 3, 3), {"dilation": 2, "padding": (2, 1), "groups": 2}),
    ((2, 4, 5, 5), (4, 1, 3, 3), {"padding": 1, "groups": 4}),
    ((2, 3, 5, 4), (5, 3, 1, 1), {}),
    ((2, 2, 6, 7), (3, 2, 2, 3), {"stride": (2, 1), "padding": (0, 1)}),
    ((2, 2, 6, 7), (3, 2, 4, 3), {"padding": "same"}),
    ((2, 2, 6, 7), (3, 2, 3, 3), {"padding": "valid", "dilation": (1, 2)}),
    ((3, 5, 5), (2, 3, 3, 3), {"padding": 1}),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("x, w, kw", CONV2D, ids=[str(c[2]) for c in CONV2D])
def test_conv2d(x, w, kw):
    check(_fn("conv2d", **kw), x, w, (w[0],))


def test_conv2d_no_bias_float32():
    check(_fn("conv2d", stride=2, padding=1), (2, 3, 8, 8), (4, 3, 3, 3), dtype="float32")


@pytest.mark.parametrize(
    "kw", [{}, {"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2}, {"padding": "same"}]
)
def test_conv1d(kw):
    g = kw.get("groups", 1)
    check(_fn("conv1d", **kw), (2, 4, 9), (6, 4 // g, 3), (6,))


def test_unfold_fold():
    check(_fn("unfold", kernel_size=(2, 3), padding=1, stride=(1, 2)), (2, 3, 5, 6))
    check(
        _fn("fold", output_size=(5, 6), kernel_size=(2, 3), padding=1, stride=(1, 2)), (2, 18, 18)
    )


def test_conv_errors():
    x, w = ag.randn(2, 3, 5, 5), ag.randn(4, 2, 3, 3)
    with pytest.raises(RuntimeError, match="to have 2 channels, but got 3 channels"):
        F.conv2d(x, w)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv2d(ag.randn(1, 3, 2, 2), ag.randn(4, 3, 3, 3))


MAXPOOL = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (2, 3), "stride": (1, 2), "dilation": (2, 1)},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True},
]


@pytest.mark.parametrize("kw", MAXPOOL, ids=[str(k) for k in MAXPOOL])
def test_max_pool2d(kw):
    check(_fn("max_pool2d", **kw), (2, 3, 7, 8))


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1}])
def test_max_pool2d_ties(kw):
    x = np.round(np.random.default_rng(0).standard_normal((2, 3, 6, 6)))
    check(_fn("max_pool2d", **kw), x)


def test_max_pool_indices():
    x = np.round(np.random.default_rng(1).standard_normal((2, 3, 7, 7)) * 2)
    for kw in [{"kernel_size": 3, "stride": 2, "padding": 1}, {"kernel_size": 2, "dilation": 2}]:
        out, idx = F.max_pool2d(ag.tensor(x), return_indices=True, **kw)
        tout, tidx = TF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(out.numpy(), tout.numpy())
        np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
        assert idx.dtype == ag.int64
    out, idx = F.max_pool1d(ag.tensor(x[0]), 3, 2, return_indices=True)
    tout, tidx = TF.max_pool1d(torch.tensor(x[0]), 3, 2, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())


AVGPOOL = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
    {"kernel_size": 2, "padding": 1, "divisor_override": 3},
]


@pytest.mark.parametrize("kw", AVGPOOL, ids=[str(k) for k in AVGPOOL])
def test_avg_pool2d(kw):
    check(_fn("avg_pool2d", **kw), (2, 3, 7, 8))


@pytest.mark.parametrize("size", [1, (3, 4), (5, 3), 2, (None, 3)])
def test_adaptive_avg_pool2d(size):
    check(_fn("adaptive_avg_pool2d", output_size=size), (2, 3, 7, 8))


def test_pool1d():
    check(_fn("max_pool1d", kernel_size=3, stride=2, padding=1), (2, 3, 9))
    check(_fn("avg_pool1d", kernel_size=3, stride=2, padding=1), (2, 3, 9))
    check(_fn("adaptive_avg_pool1d", output_size=4), (2, 3, 9))


def test_pool_unbatched_and_channel_major_input():
    check(_fn("max_pool2d", kernel_size=2), (3, 6, 6))
    # conv outputs are channel-major in memory: pooling must keep working (and grads) on them
    check(
        lambda m, x, w: (TF if m is torch else F).max_pool2d(
            (TF if m is torch else F).conv2d(x, w, padding=1).relu(), 2
        ),
        (2, 3, 6, 6),
        (4, 3, 3, 3),
    )
    check(
        lambda m, x, w: (TF if m is torch else F).avg_pool2d(
            (TF if m is torch else F).conv2d(x, w, padding=1), 3, 1, 1
        ),
        (2, 3, 6, 6),
        (4, 3, 3, 3),
    )


def test_pool_errors():
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(ag.randn(1, 1, 5, 5), 2, padding=2)


# ----------------------------------------------------------------------------- modules
tnn = torch.nn

import autogradcli.nn as nn


def _copy_params(ours, theirs):
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        p.data = ag.tensor(tp.detach().numpy().copy())


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.Conv2d(1, 8, 3, padding=1),
        lambda m: m.Conv2d(4, 8, (3, 2), stride=2, dilation=(2, 1), groups=2, bias=False),
        lambda m: m.Conv2d(2, 4, 3, padding="same"),
        lambda m: m.Conv1d(2, 4, 3),
        lambda m: m.Conv1d(2, 4, 5, stride=2, padding=2, padding_mode="reflect"),
        lambda m: m.MaxPool2d(2),
        lambda m: m.MaxPool2d((3, 2), stride=1, padding=1, dilation=2, ceil_mode=True),
        lambda m: m.MaxPool1d(3),
        lambda m: m.AvgPool2d(3, 2, 1),
        lambda m: m.AvgPool1d(3),
        lambda m: m.AdaptiveAvgPool2d((2, None)),
        lambda m: m.AdaptiveAvgPool1d(4),
    ],
)
def test_module_repr(make):
    assert repr(make(nn)) == repr(make(tnn))


def test_conv_default_init_and_params():
    ag.manual_seed(0)
    conv = nn.Conv2d(4, 64, 3, groups=2)
    assert [n for n, _ in conv.named_parameters()] == ["weight", "bias"]
    assert conv.weight.shape == (64, 2, 3, 3) and conv.bias.shape == (64,)
    bound = 1 / (2 * 9) ** 0.5  # kaiming_uniform_(a=sqrt(5)) and the bias: both 1/sqrt(fan_in)
    for p in (conv.weight, conv.bias):
        a = np.abs(p.detach().numpy())
        assert a.max() <= bound and a.max() > 0.8 * bound
    assert conv.weight.dtype == ag.float32


def test_cnn_matches_torch():
    def build(m):
        return m.Sequential(
            m.Conv2d(3, 6, 3, padding=1),
            m.ReLU(),
            m.MaxPool2d(2),
            m.Conv2d(6, 8, 3, stride=2, padding=1, groups=2),
            m.AvgPool2d(3, 1, 1),
            m.AdaptiveAvgPool2d(1),
            m.Flatten(),
        )

    if not hasattr(nn, "Sequential") or not hasattr(nn, "ReLU") or not hasattr(nn, "Flatten"):
        pytest.skip("nn.Sequential/ReLU/Flatten not available yet")
    ours, theirs = build(nn), build(tnn).double()
    ours.double()
    _copy_params(ours, theirs)
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8))
    out, tout = ours(ag.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-10)
    out.sum().backward()
    tout.sum().backward()
    for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=1e-10, err_msg=name)


def test_conv_module_forward_backward():
    for make, shape in [
        (lambda m: m.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=1, groups=2), (2, 4, 7, 6)),
        (lambda m: m.Conv1d(3, 5, 3, dilation=2), (2, 3, 9)),
    ]:
        ours, theirs = make(nn), make(tnn)
        _copy_params(ours, theirs)
        x = np.random.default_rng(1).standard_normal(shape).astype("float32")
        xa, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, tout = ours(xa), theirs(xt)
        assert out.dtype == ag.float32
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-5)
        (out * out).sum().backward()
        (tout * tout).sum().backward()
        np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), atol=1e-4)
        for p, tp in zip(ours.parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_max_pool_module_return_indices():
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 6))
    _, idx = nn.MaxPool2d(2, return_indices=True)(ag.tensor(x))
    _, tidx = tnn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda m: m.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), (2, 2, 5, 6)),
        (lambda m: m.Conv2d(2, 3, (3, 4), padding=(1, 2), padding_mode="replicate"), (1, 2, 5, 6)),
        (
            lambda m: m.Conv2d(2, 3, 3, padding="same", padding_mode="circular", dilation=2),
            (1, 2, 6, 7),
        ),
        (lambda m: m.Conv2d(2, 3, 3, padding="valid", padding_mode="reflect"), (1, 2, 5, 5)),
        (lambda m: m.Conv1d(2, 3, 5, stride=2, padding=2, padding_mode="reflect"), (2, 2, 9)),
        (lambda m: m.Conv3d(1, 2, 3, padding=1, padding_mode="replicate"), (1, 1, 3, 4, 4)),
        (lambda m: m.Conv2d(2, 3, 3, padding=1, padding_mode="circular"), (2, 5, 6)),  # unbatched
    ],
)
def test_padding_modes_match_torch(make, shape):
    """reflect / replicate / circular pad with F.pad's mode, then convolve unpadded (as torch):
    values, input and parameter gradients, and the padding amounts torch keeps."""
    from module_oracle import compare_module

    ours, _ = compare_module(make, shape)
    assert ours._reversed_padding_repeated_twice == make(tnn)._reversed_padding_repeated_twice
