"""conv_transpose2d in the CPU's image blocks (ops/conv_transpose.py ConvTransposeBlocks): every
transposed-conv config the layer tests cover, forced through the blocks (one image a block),
against torch (values, gradients, grad-of-grad through the composed form), and the choice."""

import numpy as np
import pytest
from lazy_torch import torch
from oracle import check
from test_nn_conv import _fn
from test_nn_extra_layers import CONVT2D

import autogradcli as ag
import autogradcli.nn.functional as F
from autogradcli.ops import conv_images, conv_transpose


@pytest.fixture
def blocked(monkeypatch):
    """The image blocks with one image each whatever the sizes, BLAS on one thread; records each
    block call's batch (so a test can see the blocks ran)."""
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(conv_images, "get_num_threads", lambda: 1)
    monkeypatch.setattr(conv_images, "_IMAGE_WORK", 0)
    monkeypatch.setattr(conv_images, "_IMAGE_PIXELS", 0)
    monkeypatch.setattr(conv_images, "_CACHE_BYTES", 1)
    monkeypatch.setattr(conv_transpose, "_BLOCK_PIXELS", 0)
    ran = []
    real = conv_transpose.input_gradient
    monkeypatch.setattr(
        conv_transpose,
        "input_gradient",
        lambda xp, shape, *a: ran.append(shape[0]) or real(xp, shape, *a),
    )
    with threadpool_limits(limits=1, user_api="blas"):
        yield ran


@pytest.mark.parametrize("x, w, kw", CONVT2D, ids=[str(c[2]) for c in CONVT2D])
def test_blocks_match_torch(blocked, x, w, kw):
    out_channels = w[1] * kw.get("groups", 1)
    check(_fn("conv_transpose2d", **kw), x, w, (out_channels,))  # grad-of-grad: composed
    assert blocked  # the blocks ran (the device pass takes the composed form)
    # first-order gradients, no graph: the blocks' own backward
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in (x, w, (out_channels,))]
    ours = [ag.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = F.conv_transpose2d(*ours, **kw)
    ty = torch.nn.functional.conv_transpose2d(*theirs, **kw)
    g = rng.standard_normal(tuple(ty.shape))
    y.backward(ag.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_float32_dcgan_layer_and_weights_only(blocked):
    """A DCGAN generator layer (4x4, stride 2, padding 1) in float32, with and without x's
    gradient, against torch."""
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((3, 8, 5, 5)).astype(np.float32)
    wa = rng.standard_normal((8, 4, 4, 4)).astype(np.float32)
    ba = rng.standard_normal(4).astype(np.float32)
    for x_grad in (True, False):
        x, tx = ag.tensor(xa, requires_grad=x_grad), torch.tensor(xa, requires_grad=x_grad)
        w, tw = ag.tensor(wa, requires_grad=True), torch.tensor(wa, requires_grad=True)
        b, tb = ag.tensor(ba, requires_grad=True), torch.tensor(ba, requires_grad=True)
        y = F.conv_transpose2d(x, w, b, stride=2, padding=1)
        ty = torch.nn.functional.conv_transpose2d(tx, tw, tb, stride=2, padding=1)
        assert y.dtype == ag.float32 and y.is_contiguous()
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
        (y * y).sum().backward()
        (ty * ty).sum().backward()
        for a, t in ((w, tw), (b, tb)) + (((x, tx),) if x_grad else ()):
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-3)
    assert blocked == [3, 3]


def test_choice_follows_the_convolution_rule(monkeypatch):
    """On one thread, big per-image work takes the blocks and small (the corpus DCGAN's) the
    composed form; on two the blocks only where BLAS can be held to one thread."""
    monkeypatch.setattr(conv_images, "get_num_threads", lambda: 1)
    w_big, w_small = (256, 128, 4, 4), (8, 4, 4, 4)
    x_big, x_small = np.zeros((64, 256, 8, 8), np.float32), np.zeros((2, 8, 4, 4), np.float32)
    nb, held = conv_images.image_plan(np, x_big, w_big, 1, 64, False)
    assert nb > 0 and not held
    assert conv_images.image_plan(np, x_small, w_small, 1, 16, False) == (0, False)
    monkeypatch.setattr(conv_images, "get_num_threads", lambda: 2)
    assert conv_images.image_plan(np, x_big, w_big, 1, 64, False) == (0, False)


@pytest.mark.parametrize("side, blocks", [(15, False), (16, True)])
def test_blocks_from_256_input_pixels(monkeypatch, side, blocks):
    """Image blocks only from _BLOCK_PIXELS (256) input pixels an image: just below (15x15) the
    composed form, at (16x16) the blocks (with the per-image work rule lifted)."""
    monkeypatch.setattr(conv_images, "get_num_threads", lambda: 1)
    monkeypatch.setattr(conv_images, "_IMAGE_WORK", 0)
    monkeypatch.setattr(conv_images, "_IMAGE_PIXELS", 0)
    ran = []
    real = conv_transpose.input_gradient
    monkeypatch.setattr(
        conv_transpose, "input_gradient", lambda xp, shape, *a: ran.append(1) or real(xp, shape, *a)
    )
    F.conv_transpose2d(ag.randn(2, 4, side, side), ag.randn(4, 2, 4, 4), stride=2, padding=1)
    assert bool(ran) == blocks
