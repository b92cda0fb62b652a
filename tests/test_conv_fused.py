"""The convolution's image-blocked path (ops/convolution.py: columns of a few images at a time,
recomputed in backward, never kept for the batch) against PyTorch and against the whole-batch
path, on every conv config test_nn_conv covers, plus the block-size rule."""

import numpy as np
import pytest
from lazy_torch import torch
from oracle import check
from test_nn_conv import CONV2D, _fn

import autogradcli as ag
import autogradcli.nn.functional as F
from autogradcli.ops import conv_images, convolution

TF = torch.nn.functional


@pytest.fixture
def one_thread(monkeypatch):
    """The convolution sees one thread, and BLAS runs on one, as after set_num_threads(1) (the
    blocked path's many small products each hand off to BLAS threads otherwise)."""
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(conv_images, "get_num_threads", lambda: 1)
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture
def blocked(monkeypatch, one_thread):
    """The image-blocked path with one image per block, whatever the sizes."""
    monkeypatch.setattr(conv_images, "_IMAGE_WORK", 0)
    monkeypatch.setattr(conv_images, "_IMAGE_PIXELS", 0)
    monkeypatch.setattr(conv_images, "_CACHE_BYTES", 1)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("x, w, kw", CONV2D, ids=[str(c[2]) for c in CONV2D])
def test_conv2d_blocked_matches_torch(blocked, x, w, kw):
    check(_fn("conv2d", **kw), x, w, (w[0],))


@pytest.mark.parametrize(
    "kw", [{}, {"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2}, {"padding": "same"}]
)
def test_conv1d_blocked_matches_torch(blocked, kw):
    g = kw.get("groups", 1)
    check(_fn("conv1d", **kw), (3, 4, 9), (6, 4 // g, 3), (6,))


def test_blocked_non_contiguous_input_and_some_grads(blocked):
    check(
        lambda m, x, w: _fn("conv2d", padding=1)(m, x.transpose(2, 3), w),
        (3, 2, 5, 6),
        (4, 2, 3, 3),
    )
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((3, 2, 5, 5)), rng.standard_normal((4, 2, 3, 3))
    for needs in ((True, False), (False, True)):
        x = ag.tensor(xa, requires_grad=needs[0])
        w = ag.tensor(wa, requires_grad=needs[1])
        tx = torch.tensor(xa, requires_grad=needs[0])
        tw = torch.tensor(wa, requires_grad=needs[1])
        F.conv2d(x, w, padding=1).sum().backward()
        TF.conv2d(tx, tw, padding=1).sum().backward()
        for a, t in ((x, tx), (w, tw)):
            assert (a.grad is None) == (t.grad is None)
            if a.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blocked_equals_whole_batch(monkeypatch, one_thread, dtype):
    """The blocked (one thread) and whole-batch (several) paths agree (float32 to rounding,
    float64 closely)."""
    monkeypatch.setattr(conv_images, "_IMAGE_WORK", 0)
    monkeypatch.setattr(conv_images, "_IMAGE_PIXELS", 0)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(dtype) for s in [(5, 4, 6, 6), (8, 4, 3, 3), (8,)]]
    g = rng.standard_normal((5, 8, 6, 6)).astype(dtype)
    results = []
    for threads in (2, 1):
        monkeypatch.setattr(conv_images, "get_num_threads", lambda t=threads: t)
        x, w, b = (ag.tensor(a, requires_grad=True) for a in arrays)
        out = F.conv2d(x, w, b, padding=1)
        assert out.dtype == x.dtype and out.is_contiguous()
        out.backward(ag.tensor(g))
        results.append([out.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()])
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(*results):
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blocked_with_a_shorter_last_block(monkeypatch, one_thread, dtype):
    """Blocks of two images over a batch of three (the last block shorter), groups and bias."""
    monkeypatch.setattr(conv_images, "_IMAGE_WORK", 0)
    monkeypatch.setattr(conv_images, "_IMAGE_PIXELS", 0)
    monkeypatch.setattr(conv_images, "_CACHE_BYTES", 2 * 36 * 25 * np.dtype(dtype).itemsize)
    x, w = ag.zeros((3, 4, 5, 5), dtype=dtype), ag.zeros((4, 2, 3, 3), dtype=dtype)
    assert F.conv2d(x, w.requires_grad_(), padding=1, groups=2).grad_fn.block == 2
    check(_fn("conv2d", padding=1, groups=2), (3, 4, 5, 5), (4, 2, 3, 3), (4,), dtype=dtype)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_reused_planes_over_a_shorter_last_block(monkeypatch, one_thread):
    """The padded planes are reused block to block; with no top padding (a 2x2 'same' kernel:
    pads 0 above, 1 below and right) the last, shorter block reads past its planes into the
    previous block's: only at wrapped columns, which are zeroed. Values match torch."""
    monkeypatch.setattr(conv_images, "_IMAGE_WORK", 0)
    monkeypatch.setattr(conv_images, "_IMAGE_PIXELS", 0)
    monkeypatch.setattr(conv_images, "_CACHE_BYTES", 2 * 8 * 30 * 8)
    x, w = ag.zeros((3, 2, 5, 6), dtype="float64"), ag.zeros((3, 2, 2, 2), dtype="float64")
    assert F.conv2d(x, w.requires_grad_(), padding="same").grad_fn.block == 2
    check(_fn("conv2d", padding="same"), (3, 2, 5, 6), (3, 2, 2, 2), (3,))


@pytest.mark.parametrize(
    "kw, adjoint",
    [
        ({"padding": 1}, (1, 1, 1, 1)),
        ({"padding": (0, 2), "dilation": 2}, (4, 4, 2, 2)),
        ({"padding": 3}, None),  # wider than the kernel reaches: the columns are scattered back
        ({"padding": 1, "stride": (1, 2)}, None),
    ],
)
def test_input_gradient_as_flipped_convolution(blocked, kw, adjoint):
    """Stride-1 input gradients are the convolution of g with the flipped kernel under the
    adjoint padding; the other geometries scatter columns back (col2im). Both match torch."""
    st, pad, dil = convolution.conv_geometry(
        (3, 3), kw.get("stride", 1), kw["padding"], kw.get("dilation", 1)
    )
    assert conv_images._adjoint_pad((3, 3), st, pad, dil) == adjoint
    check(_fn("conv2d", groups=2, **kw), (3, 4, 7, 7), (6, 2, 3, 3), (6,))


CHUNKED = [*CONV2D[:4], ((2, 4, 8, 4), (4, 4, 3, 3), {"padding": 1})]  # the last: 2 rows a chunk


@pytest.mark.parametrize("x, w, kw", CHUNKED, ids=[str(c[2]) for c in CHUNKED])
def test_blocked_in_column_chunks_matches_torch(blocked, monkeypatch, x, w, kw):
    """Products over chunks of a few output rows (small weights on numpy) give torch's values
    and gradients: forward, weight gradient and the flipped-kernel input gradient."""
    monkeypatch.setattr(conv_images, "_CHUNK_COLUMNS", 12)
    check(_fn("conv2d", **kw), x, w, (w[0],))


def test_chunk_rows_rule(monkeypatch):
    w3 = np.zeros((1, 32, 288), np.float32)  # the ResNet step's 32->32 3x3 conv
    assert conv_images._chunk_rows(np, w3, 16, 16) == 4  # 64 columns per product
    assert conv_images._chunk_rows(np, w3, 15, 16) == 3  # rows dividing Ho: 48 columns
    assert conv_images._chunk_rows(np, w3, 8, 8) == 8  # one image is 64 columns: whole
    assert conv_images._chunk_rows(np, w3, 16, 65) == 16  # a row wider than a chunk
    assert conv_images._chunk_rows(np, np.zeros((1, 64, 576)), 16, 16) == 16  # big weights
    monkeypatch.setattr(conv_images, "_CHUNK_COLUMNS", 12)
    assert conv_images._chunk_rows(np, np.zeros((1, 4, 36)), 8, 4) == 2  # CHUNKED's last


def test_blocked_grad_of_grad(blocked):
    """create_graph takes the Function-built backward, so second derivatives still work."""
    check(
        lambda m, x, w: _fn("conv2d", padding=1)(m, x, w).pow(2).sum(), (3, 2, 4, 4), (2, 2, 3, 3)
    )


def test_image_block_rule():
    # the ResNet step's 3x3 conv over 32 channels of 16x16, batch 64: 8 images a block
    assert conv_images.image_block(64, 288, 256, 4) == 8
    # batch 16: small columns (4.5 MiB), but each image's products are big enough (2.4M)
    assert conv_images.image_block(16, 288, 256, 4, work=32 * 288 * 256) == 8
    # the CNN bench's convs and the ResNet's RGB stem: small columns, small products: whole batch
    assert conv_images.image_block(64, 72, 196, 4, work=16 * 72 * 196) == 0
    assert conv_images.image_block(64, 27, 256, 4, work=32 * 27 * 256) == 0
    # the limit: just below and at _IMAGE_WORK multiply-adds an image
    limit = conv_images._IMAGE_WORK
    assert conv_images.image_block(4, 64, 64, 4, work=limit - 1) == 0
    assert conv_images.image_block(4, 64, 64, 4, work=limit) == 4
    # a first layer training only its weights: blocks from _WEIGHTS_ONLY_WORK multiply-adds,
    # with _WEIGHTS_ONLY_ROWS output channels a group or more (the ResNet's RGB stem: 32)
    stem = 32 * 27 * 256
    assert conv_images.image_block(64, 27, 256, 4, work=stem, weights_only=32) == 64
    least, rows = conv_images._WEIGHTS_ONLY_WORK, conv_images._WEIGHTS_ONLY_ROWS
    assert conv_images.image_block(64, 27, 64, 4, work=least - 1, weights_only=rows) == 0
    assert conv_images.image_block(64, 27, 64, 4, work=least, weights_only=rows) == 64
    assert conv_images.image_block(64, 27, 256, 4, work=stem, weights_only=rows - 1) == 0
    # under _IMAGE_PIXELS output pixels an image the whole batch, however big the work
    pixels = conv_images._IMAGE_PIXELS
    assert conv_images.image_block(64, 4608, pixels - 1, 4, work=512 * 4608 * 63) == 0
    assert conv_images.image_block(64, 4608, pixels, 4, work=512 * 4608 * 64) > 0
    # one huge image: blocks of one
    assert conv_images.image_block(4, 4608, 4096, 4) == 1
    assert conv_images.image_block(0, 288, 256, 4) == 0


@pytest.mark.parametrize("x_grad", [False, True])
def test_first_layer_takes_image_blocks(monkeypatch, one_thread, x_grad):
    """A stem-like conv (3 -> 16 channels, 16x16) runs in image blocks when only its weights
    train and on the whole batch when its input needs a gradient too; both match torch."""
    picked = []
    real = conv_images._blocked_forward
    monkeypatch.setattr(
        convolution, "_blocked_forward", lambda *a: picked.append(a[-1]) or real(*a)
    )
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((4, 3, 16, 16)).astype(np.float32)
    wa = rng.standard_normal((16, 3, 3, 3)).astype(np.float32)
    x, w = ag.tensor(xa, requires_grad=x_grad), ag.tensor(wa, requires_grad=True)
    tx, tw = torch.tensor(xa, requires_grad=x_grad), torch.tensor(wa, requires_grad=True)
    F.conv2d(x, w, padding=1).square().sum().backward()
    TF.conv2d(tx, tw, padding=1).square().sum().backward()
    assert picked == ([] if x_grad else [4])
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_image_block_none_on_several_threads():
    assert conv_images.image_block(64, 288, 256, 4, threads=2) == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_big_columns_never_kept_for_backward(monkeypatch, threads):
    """On any thread count a convolution keeps no big whole-batch columns for backward (they
    were 110 MiB of the ResNet step on 2 threads); on several (64x576 weights: the whole-batch
    path), columns up to the limit are kept; on one (image blocks) none are."""
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(conv_images, "get_num_threads", lambda: threads)
    w = ag.zeros((64, 64, 3, 3), requires_grad=True)
    with threadpool_limits(limits=threads, user_api="blas"):
        big = F.conv2d(ag.zeros((64, 64, 16, 16)), w, padding=1).grad_fn  # 36 MiB of columns
        limit = F.conv2d(ag.zeros((18, 64, 16, 16)), w, padding=1).grad_fn  # 10.1 MiB: over
        small = F.conv2d(ag.zeros((17, 64, 16, 16)), w, padding=1).grad_fn  # 9.6 MiB: under
    assert big.cols is None and limit.cols is None
    if threads > 1:  # the whole-batch path keeps small columns
        assert small.cols.shape == (576, 17 * 256) and big.block == 0
    else:  # image blocks keep none
        assert small.cols is None and big.block == 4


def test_small_weights_on_two_threads_hold_blas_to_one(monkeypatch):
    """On several threads, small weights (the ResNet-ish 32x288) take image blocks with BLAS
    held to one thread inside the call (restored after); values and gradients match torch."""
    from threadpoolctl import threadpool_info, threadpool_limits

    monkeypatch.setattr(conv_images, "get_num_threads", lambda: 2)
    seen = []
    real = conv_images._blocked_forward
    blas = lambda: [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    monkeypatch.setattr(conv_images, "_blocked_forward", lambda *a: seen.append(blas()) or real(*a))
    monkeypatch.setattr(convolution, "_blocked_forward", conv_images._blocked_forward)
    with threadpool_limits(limits=2, user_api="blas"):
        w = ag.zeros((32, 32, 3, 3), requires_grad=True)
        fn = F.conv2d(ag.zeros((64, 32, 16, 16)), w, padding=1)
        assert fn.grad_fn.block == 8 and fn.grad_fn.held
        assert all(n == 1 for n in seen[0]) and all(n == 2 for n in blas())
        big = F.conv2d(ag.zeros((2, 64, 4, 4)), ag.zeros((64, 64, 3, 3), requires_grad=True))
        assert big.grad_fn.block == 0 and not big.grad_fn.held  # 64x576: whole batch
    monkeypatch.setattr(conv_images, "_IMAGE_WORK", 0)
    monkeypatch.setattr(conv_images, "_IMAGE_PIXELS", 0)
    check(_fn("conv2d", padding=1), (3, 4, 5, 5), (4, 4, 3, 3), (4,))


def test_blas_hold_nests_and_restores_once():
    """Overlapping holds (as from two Python threads) keep BLAS at one thread until the last
    one ends, which restores the original count."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas():
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    with threadpool_limits(limits=2, user_api="blas"):
        outer = conv_images._blas_held(True)
        inner = conv_images._blas_held(True)
        outer.__enter__()
        inner.__enter__()
        outer.__exit__(None, None, None)  # the first in ends first: still held
        assert blas() == {1}
        inner.__exit__(None, None, None)
        assert blas() == {2}
        with conv_images._blas_held(False):
            assert blas() == {2}


def test_recomputed_columns_match_torch_on_two_threads(monkeypatch):
    """The whole-batch path with its columns recomputed in backward: values and gradients."""
    monkeypatch.setattr(conv_images, "_BIG_COLUMNS", 0)
    monkeypatch.setattr(conv_images, "get_num_threads", lambda: 2)
    check(_fn("conv2d", padding=1, groups=2), (3, 4, 5, 5), (4, 2, 3, 3), (4,))


def test_a_device_runs_the_whole_batch_however_big_its_columns(monkeypatch, strict_cuda):
    """Image blocks are for the CPU's cache: on a device the batch the CPU would run 8 images
    at a time takes the whole-batch path (block 0; 4x faster on an H100 than 8-image blocks)."""
    monkeypatch.setattr(conv_images, "get_num_threads", lambda: 1)
    w = ag.zeros((32, 32, 3, 3), requires_grad=True, device="cuda")
    assert F.conv2d(ag.zeros((64, 32, 16, 16), device="cuda"), w, padding=1).grad_fn.block == 0
    w_cpu = ag.zeros((32, 32, 3, 3), requires_grad=True)
    assert F.conv2d(ag.zeros((64, 32, 16, 16)), w_cpu, padding=1).grad_fn.block == 8


def test_kept_scratch_by_role_recency_and_size(monkeypatch):
    """Scratch kept across calls per thread: the same key gives the same buffer, another role
    another one; past _KEPT_BUFFERS keys the least recently used goes; a buffer of exactly
    _KEPT_BYTES is kept, one byte more is not; another thread has its own."""
    import threading

    monkeypatch.setattr(conv_images._KEPT, "buffers", {})
    monkeypatch.setattr(conv_images, "_KEPT_BUFFERS", 2)
    monkeypatch.setattr(conv_images, "_KEPT_BYTES", 8)
    a = conv_images._empty(np, "columns", (2,), np.float32)
    assert conv_images._empty(np, "columns", (2,), np.float32) is a
    b = conv_images._empty(np, "pixel-major x", (2,), np.float32)
    assert b is not a
    conv_images._empty(np, "columns", (2,), np.float32)  # a used last: b is the oldest
    conv_images._empty(np, "columns", (1,), np.float32)  # a third key: b goes
    assert conv_images._empty(np, "columns", (2,), np.float32) is a
    assert conv_images._empty(np, "pixel-major x", (2,), np.float32) is not b
    big = conv_images._empty(np, "columns", (3,), np.float32)  # 12 bytes: not kept
    assert conv_images._empty(np, "columns", (3,), np.float32) is not big
    other = []
    thread = threading.Thread(
        target=lambda: other.append(conv_images._empty(np, "columns", (2,), np.float32))
    )
    thread.start()
    thread.join()
    assert other[0] is not a


def test_kept_buffers_across_calls_match_torch(one_thread, monkeypatch):
    """The same convolution twice (the second reuses the first's kept columns and planes),
    then a batch shorter than a block: torch's values every time."""
    monkeypatch.setattr(conv_images, "_IMAGE_WORK", 0)
    monkeypatch.setattr(conv_images, "_IMAGE_PIXELS", 0)
    monkeypatch.setattr(conv_images, "_CACHE_BYTES", 2 * 18 * 16 * 8)
    x, w = ag.zeros((3, 2, 4, 4), dtype="float64"), ag.zeros((3, 2, 3, 3), dtype="float64")
    assert F.conv2d(x, w.requires_grad_(), padding=1).grad_fn.block == 2
    for shape in [(3, 2, 4, 4), (3, 2, 4, 4), (1, 2, 4, 4)]:
        check(_fn("conv2d", padding=1), shape, (3, 2, 3, 3), (3,))
