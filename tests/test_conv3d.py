"""3-D convolution and pooling (``conv3d``, ``max_pool3d``, ``avg_pool3d``,
``adaptive_avg_pool3d``, their layers, ``BatchNorm3d``, ``LazyConv3d``/``LazyBatchNorm3d``),
built on the 2-D ops, against PyTorch on identical data: values, gradients, grad-of-grad,
reprs and errors (issue 21)."""

import numpy as np
import pytest
from module_oracle import compare_module
from oracle import check

import autogradcli as ag
import autogradcli.nn as nn

CONV = [
    ({}, (3, 4, 3, 2, 3)),
    ({"stride": 2, "padding": 1, "groups": 2}, (4, 2, 2, 2, 2)),
    ({"padding": "same", "dilation": (2, 1, 1)}, (2, 4, 2, 3, 2)),
    ({"stride": (1, 2, 3), "padding": (2, 0, 1), "dilation": 2}, (2, 4, 2, 2, 2)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs, wshape", CONV, ids=range(len(CONV)))
def test_conv3d_matches_torch(kwargs, wshape, dtype):
    check(
        lambda m, x, w, b: m.nn.functional.conv3d(x, w, b, **kwargs),
        (1, 4, 4, 4, 4),
        wshape,
        (wshape[0],),
        dtype=dtype,
        gradgrad=dtype == "float64",
    )


def test_conv3d_unbatched_and_without_bias_match_torch():
    check(lambda m, x, w: m.conv3d(x, w), (2, 3, 3, 3), (3, 2, 2, 2, 2), gradgrad=False)


POOLS = [
    lambda F, x: F.max_pool3d(x, 2),
    lambda F, x: F.max_pool3d(x, 3, stride=2, padding=1),
    lambda F, x: F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 2), ceil_mode=True),
    lambda F, x: F.max_pool3d(x, 2, stride=1, dilation=(2, 1, 1)),
    lambda F, x: F.avg_pool3d(x, 2),
    lambda F, x: F.avg_pool3d(x, 3, stride=2, padding=1, count_include_pad=False),
    lambda F, x: F.avg_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=1, ceil_mode=True),
    lambda F, x: F.avg_pool3d(x, 2, padding=1, divisor_override=3),
    lambda F, x: F.adaptive_avg_pool3d(x, 1),
    lambda F, x: F.adaptive_avg_pool3d(x, (3, None, 2)),
]


@pytest.mark.parametrize("pool", POOLS, ids=range(len(POOLS)))
def test_pool3d_matches_torch(pool):
    check(lambda m, x: pool(m.nn.functional, x), (1, 2, 5, 4, 5), gradgrad=False)
    check(lambda m, x: pool(m.nn.functional, x), (2, 4, 3, 4), dtype="float32", gradgrad=False)


LAYERS = [
    lambda nn: nn.Conv3d(2, 4, 3, padding=1),
    lambda nn: nn.Conv3d(2, 2, (1, 2, 3), stride=2, groups=2, bias=False),
    lambda nn: nn.MaxPool3d(2),
    lambda nn: nn.AvgPool3d(3, stride=2, padding=1),
    lambda nn: nn.AdaptiveAvgPool3d((1, None, 2)),
    lambda nn: nn.BatchNorm3d(2),
]


@pytest.mark.parametrize("make", LAYERS, ids=range(len(LAYERS)))
def test_layers_3d_match_torch(make):
    torch = pytest.importorskip("torch")
    compare_module(make, (2, 2, 3, 4, 5), train=True)
    assert repr(make(nn)) == repr(make(torch.nn))


def test_lazy_3d_layers_match_torch():
    torch = pytest.importorskip("torch")
    for make in (lambda nn: nn.LazyConv3d(4, 2, stride=2), lambda nn: nn.LazyBatchNorm3d()):
        ours, theirs = make(nn), make(torch.nn)
        assert repr(ours) == repr(theirs)
        ours(ag.ones(1, 3, 4, 4, 4))
        theirs(torch.ones(1, 3, 4, 4, 4))
        assert repr(ours) == repr(theirs) and type(ours).__name__ == type(theirs).__name__


def test_3d_errors_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda m: m.nn.functional.conv3d(m.ones(1, 2, 5, 5, 5), m.ones(4, 3, 3, 3, 3)),
        lambda m: m.nn.functional.conv3d(m.ones(1, 3, 2, 5, 5), m.ones(4, 3, 3, 3, 3)),
        lambda m: m.nn.functional.conv3d(m.ones(3, 5, 5), m.ones(4, 3, 3, 3, 3)),
        lambda m: m.nn.functional.max_pool3d(m.ones(2, 5, 5), 2),
        lambda m: m.nn.functional.avg_pool3d(m.ones(2, 5, 5), 2),
        lambda m: m.nn.functional.adaptive_avg_pool3d(m.ones(2, 5, 5), 2),
        lambda m: m.nn.functional.max_pool3d(m.ones(1, 1, 4, 4, 4), 2, padding=2),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(ag)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="expected 5D input"):
        nn.BatchNorm3d(2)(ag.ones(2, 2, 3, 3))


def test_conv3d_output_is_contiguous_and_float32_stays_float32():
    out = nn.Conv3d(2, 3, 2)(ag.ones(1, 2, 3, 3, 3))
    assert out.dtype == ag.float32 and out.is_contiguous()
    assert out.view(-1).shape == (3 * 2 * 2 * 2,)
    np.testing.assert_allclose(
        out.detach().numpy()[0, :, 0, 0, 0], out.detach().numpy()[0, :, 1, 1, 1]
    )


TRANSPOSED = [
    ({}, (4, 3, 2, 3, 2)),
    ({"stride": 2, "padding": 1, "groups": 2}, (4, 2, 3, 2, 2)),
    (
        {
            "stride": (2, 1, 3),
            "padding": (1, 0, 1),
            "output_padding": (1, 0, 2),
            "dilation": (1, 2, 1),
        },
        (4, 3, 2, 2, 3),
    ),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs, wshape", TRANSPOSED, ids=range(len(TRANSPOSED)))
def test_conv_transpose3d_matches_torch(kwargs, wshape, dtype):
    groups = kwargs.get("groups", 1)
    check(
        lambda m, x, w, b: m.nn.functional.conv_transpose3d(x, w, b, **kwargs),
        (1, 4, 2, 3, 3),
        wshape,
        (wshape[1] * groups,),
        dtype=dtype,
        gradgrad=dtype == "float64",
    )


def test_conv_transpose3d_layer_matches_torch():
    torch = pytest.importorskip("torch")
    make = lambda nn: nn.ConvTranspose3d(2, 3, (2, 3, 2), stride=2, padding=1)
    compare_module(make, (2, 2, 3, 3, 3))
    assert repr(make(nn)) == repr(make(torch.nn))
    out = make(nn)(ag.ones(1, 2, 3, 3, 3), output_size=(5, 6, 4))
    assert tuple(out.shape) == (1, 3, 5, 6, 4) and out.is_contiguous()
