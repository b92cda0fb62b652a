"""Instance norm, resampling (interpolate, Upsample, pixel shuffle, fold/unfold), distances and
RMSNorm against PyTorch: functional forms (forward, grads, grad-of-grad, also on the strict cupy
stand-in), the layers (reprs, state_dict, outputs and gradients with torch's weights) and torch's
errors."""

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


# ---- instance norm ---------------------------------------------------------------------------

INORM = [
    (lambda m: m.InstanceNorm1d(3), (2, 3, 5), False),
    (lambda m: m.InstanceNorm1d(3, affine=True), (3, 5), True),
    (lambda m: m.InstanceNorm2d(4, affine=True, eps=1e-3), (2, 4, 3, 5), True),
    (lambda m: m.InstanceNorm2d(4, track_running_stats=True), (2, 4, 3, 3), True),
    (lambda m: m.InstanceNorm2d(4, affine=True, track_running_stats=True), (2, 4, 3, 3), False),
    (
        lambda m: m.InstanceNorm3d(2, affine=True, momentum=None, track_running_stats=True),
        (2, 2, 2, 3, 2),
        True,
    ),
]


@pytest.mark.parametrize("make, shape, train", INORM)
def test_instance_norm_layers_match_torch(make, shape, train):
    torch = pytest.importorskip("torch")
    if not train:  # eval with running stats: give them non-trivial values first

        def make_eval(m, make=make):
            layer = make(m)
            if layer.running_mean is not None:
                with torch.no_grad() if m is torch.nn else ag.no_grad():
                    layer.running_mean.fill_(0.3)
                    layer.running_var.fill_(2.0)
            return layer
    else:
        make_eval = make
    ours, theirs = compare_module(make_eval, shape, train=train, dtype="float32")
    assert repr(ours) == repr(theirs)
    assert state_shapes(ours) == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    if train and theirs.running_mean is not None:  # running statistics updated as torch's
        np.testing.assert_allclose(
            ours.running_mean.numpy(), theirs.running_mean.numpy(), atol=1e-6
        )
        np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), atol=1e-6)
        assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked)


def test_instance_norm_functional():
    _check(_fn("instance_norm"), (2, 3, 4, 5))
    _check(
        lambda m, x, w, b: (m.nn.functional if m.__name__ == "torch" else F).instance_norm(
            x, weight=w, bias=b
        ),
        (2, 3, 6),
        (3,),
        (3,),
    )


def test_instance_norm_errors_and_defaults():
    torch = pytest.importorskip("torch")
    layer = nn.InstanceNorm1d(3)
    assert layer.weight is None and layer.running_mean is None and layer.training
    cases = [
        (lambda m: m.InstanceNorm1d(3), (2, 3, 1)),  # one spatial element
        (lambda m: m.InstanceNorm1d(3, affine=True), (2, 4, 5)),
        (lambda m: m.InstanceNorm2d(3), (2, 3, 4, 4, 4)),
    ]
    for make, shape in cases:
        with pytest.raises(ValueError) as theirs:
            make(torch.nn)(torch.randn(*shape))
        with pytest.raises(ValueError) as ours:
            make(nn)(ag.randn(*shape))
        assert str(ours.value) == str(theirs.value).replace("torch.", "autogradcli.")
    # two spatial elements: just inside the limit
    assert nn.InstanceNorm1d(3)(ag.randn(2, 3, 2)).shape == (2, 3, 2)
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(ag.randn(2, 4, 5))


# ---- interpolate / Upsample ------------------------------------------------------------------

INTERP = [
    ((2, 3, 4, 5), {"scale_factor": 2}),
    ((2, 3, 4, 5), {"size": (7, 3)}),
    ((2, 3, 6, 5), {"scale_factor": (0.5, 1.7)}),
    ((2, 3, 6), {"size": 10}),
    ((1, 2, 3, 2, 4), {"scale_factor": (1.5, 2, 0.75)}),
    ((2, 3, 5, 5), {"scale_factor": 1.3, "recompute_scale_factor": True}),
    ((2, 3, 4, 5), {"size": (4, 5)}),
]


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("shape, kw", INTERP, ids=[str(c[1]) for c in INTERP])
def test_interpolate_nearest(mode, shape, kw):
    _check(_fn("interpolate", mode=mode, **kw), shape)


_LINEAR = {3: "linear", 4: "bilinear", 5: "trilinear"}


@pytest.mark.parametrize("align", [False, True, None])
@pytest.mark.parametrize("shape, kw", INTERP, ids=[str(c[1]) for c in INTERP])
def test_interpolate_linear(align, shape, kw):
    _check(_fn("interpolate", mode=_LINEAR[len(shape)], align_corners=align, **kw), shape)


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_interpolate_float32_and_odd_sizes(mode):
    kw = {} if mode == "nearest" else {"align_corners": False}
    # downsampling by non-integer factors and one-pixel inputs/outputs
    for shape, size in [((2, 3, 9, 7), (4, 5)), ((1, 2, 1, 1), (3, 4)), ((1, 2, 5, 4), (1, 1))]:
        _check(_fn("interpolate", size=size, mode=mode, **kw), shape, dtype="float32")


def test_interpolate_area():
    _check(_fn("interpolate", size=(3, 2), mode="area"), (2, 3, 7, 5))
    _check(_fn("interpolate", scale_factor=0.5, mode="area"), (2, 3, 8))


def test_interpolate_errors_match_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    cases = [
        ((1, 1, 3, 3), {"size": 2, "scale_factor": 2}),
        ((1, 1, 3, 3), {}),
        ((1, 1, 3, 3), {"size": 2, "align_corners": True}),
        ((1, 1, 3, 3), {"size": (2, 2, 2)}),
        ((1, 1, 3, 3), {"scale_factor": (2, 2, 2)}),
        ((1, 1, 3, 3), {"size": (0, 2)}),
        ((1, 1, 3, 3), {"scale_factor": 0.3}),  # floor(0.9) = 0
        ((1, 1, 3), {"size": 4, "mode": "bilinear"}),
        ((1, 1, 3, 3), {"size": 4, "mode": "linear"}),
        ((3, 3), {"size": 4}),
        ((1, 1, 3, 3), {"size": 4, "recompute_scale_factor": True}),
        ((1, 1, 3, 3), {"size": 4, "mode": "nearest", "antialias": True}),
    ]
    for shape, kw in cases:
        with pytest.raises(Exception) as theirs:
            TF.interpolate(torch.randn(*shape), **kw)
        with pytest.raises(Exception) as ours:
            F.interpolate(ag.randn(*shape), **kw)
        assert type(ours.value) is type(theirs.value), kw
        assert str(ours.value) == str(theirs.value), kw
    # just inside: scale 0.34 of 3 gives one pixel
    assert F.interpolate(ag.randn(1, 1, 3, 3), scale_factor=0.34).shape == (1, 1, 1, 1)


UPSAMPLE = [
    lambda m: m.Upsample(scale_factor=2),
    lambda m: m.Upsample(size=(5, 7), mode="bilinear"),
    lambda m: m.Upsample(scale_factor=(1.5, 2.0), mode="bilinear", align_corners=True),
    lambda m: m.UpsamplingNearest2d(size=6),
    lambda m: m.UpsamplingBilinear2d(scale_factor=2),
]


@pytest.mark.parametrize("make", UPSAMPLE)
def test_upsample_layers_match_torch(make):
    ours, theirs = compare_module(make, (2, 3, 4, 5), dtype="float32")
    assert repr(ours) == repr(theirs)


def test_deprecated_upsample_functions_warn():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    for name in ("upsample", "upsample_nearest", "upsample_bilinear"):
        x = np.random.default_rng(0).standard_normal((1, 2, 3, 3)).astype("float32")
        with pytest.warns(UserWarning) as ours:
            out = getattr(F, name)(ag.tensor(x), scale_factor=2)
        with pytest.warns(UserWarning) as theirs:
            ref = getattr(TF, name)(torch.tensor(x), scale_factor=2)
        assert str(ours[0].message) == str(theirs[0].message)
        np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-6)


# ---- pixel shuffle, fold/unfold layers, distances, RMSNorm -----------------------------------


@pytest.mark.parametrize("shape, r", [((2, 8, 3, 4), 2), ((18, 2, 3), 3), ((2, 1, 4, 3, 2), 2)])
def test_pixel_shuffle_roundtrip(shape, r):
    _check(_fn("pixel_shuffle", upscale_factor=r), shape)
    out = (*shape[:-3], shape[-3] // (r * r), shape[-2] * r, shape[-1] * r)
    _check(_fn("pixel_unshuffle", downscale_factor=r), out)


def test_distances_and_normalize():
    _check(_fn("normalize"), (4, 5))
    _check(_fn("normalize", p=1.0, dim=-1), (3, 4, 5), dtype="float32")
    _check(_fn("cosine_similarity"), (4, 5), (4, 5))
    _check(_fn("cosine_similarity", dim=-1), (3, 1, 5), (4, 5))  # broadcasting
    _check(_fn("pairwise_distance"), (4, 5), (4, 5))
    _check(_fn("pairwise_distance", p=3.0, keepdim=True), (4, 5), (1, 5), dtype="float32")


def test_rms_norm():
    _check(_fn("rms_norm", normalized_shape=(5,)), (3, 5))
    _check(
        lambda m, x, w: (m.nn.functional if m.__name__ == "torch" else F).rms_norm(
            x, (4, 5), w, eps=1e-3
        ),
        (2, 4, 5),
        (4, 5),
    )
    # tiny inputs: mean(x^2) ~ 1e-8 is below the default eps, so the dtype's epsilon shows
    tiny = np.random.default_rng(0).standard_normal((3, 5)) * 1e-4
    _check(_fn("rms_norm", normalized_shape=(5,)), tiny, dtype="float32")
    _check(_fn("rms_norm", normalized_shape=(5,)), tiny * 1e-4, dtype="float64")


VISION_LAYERS = [
    (lambda m: m.PixelShuffle(2), ((2, 8, 3, 3),)),
    (lambda m: m.PixelUnshuffle(3), ((2, 1, 6, 3),)),
    (lambda m: m.Unfold((2, 3), padding=1, stride=2), ((2, 3, 5, 6),)),
    (lambda m: m.Fold((5, 6), (2, 3), padding=1, stride=(1, 2)), ((2, 18, 18),)),
    (lambda m: m.CosineSimilarity(dim=-1, eps=1e-6), ((4, 5), (4, 5))),
    (lambda m: m.PairwiseDistance(p=1.0, keepdim=True), ((4, 5), (4, 5))),
    (lambda m: m.RMSNorm(5), ((3, 5),)),
    (lambda m: m.RMSNorm((4, 5), eps=1e-4, elementwise_affine=False), ((2, 4, 5),)),
]


@pytest.mark.parametrize("make, shapes", VISION_LAYERS)
def test_vision_layers_match_torch(make, shapes):
    ours, theirs = compare_module(make, *shapes, dtype="float32")
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_vision_errors_match_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    cases = [
        ("pixel_shuffle", (1, 5, 2, 2), (2,)),
        ("pixel_shuffle", (5, 2), (2,)),
        ("pixel_unshuffle", (1, 1, 3, 4), (2,)),
        ("pixel_unshuffle", (1, 1, 4, 3), (2,)),
        ("rms_norm", (2, 3), ((4,),)),
    ]
    for name, shape, args in cases:
        with pytest.raises(RuntimeError) as theirs:
            getattr(TF, name)(torch.randn(*shape), *args)
        with pytest.raises(RuntimeError) as ours:
            getattr(F, name)(ag.randn(*shape), *args)
        assert str(ours.value) == str(theirs.value)


# ---- affine_grid / grid_sample ---------------------------------------------------------------


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(align):
    _check(_fn("affine_grid", size=(2, 3, 4, 5), align_corners=align), (2, 2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(
            _fn("affine_grid", size=(1, 1, 1, 3), align_corners=align), (1, 2, 3), dtype="float32"
        )
    with warnings.catch_warnings(record=True) as seen:  # unit-size grid: torch warns if aligned
        warnings.simplefilter("always")
        F.affine_grid(ag.randn(1, 2, 3), (1, 1, 1, 3), align_corners=align)
        F.affine_grid(ag.randn(1, 2, 3), (1, 1, 2, 3), align_corners=align)  # no unit size
    assert [str(w.message)[:40] for w in seen] == (
        ["Since version 1.3.0, affine_grid behavio"] if align else []
    )


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(mode, padding, align):
    rng = np.random.default_rng(1)
    grid = rng.uniform(-1.4, 1.4, (2, 3, 4, 2))  # some points outside [-1, 1]
    kw = {"mode": mode, "padding_mode": padding, "align_corners": align}
    # nearest: no gradient for the grid (torch gives zeros), bilinear: both
    _check(
        _fn("grid_sample", **kw), (2, 3, 5, 6), grid, grad_inputs=[0] if mode == "nearest" else None
    )


def test_grid_sample_float32_and_spatial_transformer():
    _check(
        _fn("grid_sample", align_corners=False),
        (2, 3, 5, 6),
        np.random.default_rng(2).uniform(-1, 1, (2, 4, 4, 2)),
        dtype="float32",
    )

    def stn(m, x, theta):  # the spatial transformer tutorial's transform
        f = m.nn.functional if m.__name__ == "torch" else F
        grid = f.affine_grid(theta, x.shape, align_corners=False)
        return f.grid_sample(x, grid, align_corners=False)

    theta = np.array([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]], [[1.0, 0.0, 0.2], [0.0, 0.8, -0.1]]])
    _check(stn, (2, 1, 6, 6), theta)


def test_grid_sample_errors_and_warnings_match_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    cases = [
        ("affine_grid", lambda m: (m.randn(1, 3, 3), (1, 1, 2, 2)), {"align_corners": False}),
        ("affine_grid", lambda m: (m.randn(1, 2, 3), (1, 1, 2)), {"align_corners": False}),
        ("affine_grid", lambda m: (m.randn(2, 2, 3), (1, 1, 2, 2)), {"align_corners": False}),
        ("grid_sample", lambda m: (m.randn(1, 1, 2, 2), m.randn(1, 2, 2, 2)), {"mode": "foo"}),
        (
            "grid_sample",
            lambda m: (m.randn(1, 1, 2, 2), m.randn(1, 2, 2, 2)),
            {"padding_mode": "foo"},
        ),
        (
            "grid_sample",
            lambda m: (m.randn(1, 1, 2, 2), m.randn(2, 2, 2, 2)),
            {"align_corners": False},
        ),
        (
            "grid_sample",
            lambda m: (m.randn(1, 1, 2, 2), m.randn(1, 2, 2, 3)),
            {"align_corners": False},
        ),
    ]
    for name, args, kw in cases:
        with pytest.raises(Exception) as theirs:
            getattr(TF, name)(*args(torch), **kw)
        with pytest.raises(Exception) as ours:
            getattr(F, name)(*args(ag), **kw)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value).replace("torch.", "autogradcli.")
    with pytest.warns(UserWarning) as theirs:
        TF.grid_sample(torch.randn(1, 1, 2, 2), torch.zeros(1, 2, 2, 2))
    with pytest.warns(UserWarning) as ours:
        F.grid_sample(ag.randn(1, 1, 2, 2), ag.zeros(1, 2, 2, 2))
    assert str(ours[0].message) == str(theirs[0].message)
