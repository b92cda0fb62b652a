"""The image-major im2col/col2im kernels (ops/im2col.py) against the channel-major ones they
replace in the blocked convolution: the shifted stride-1 fast path and the general strided path
give the same columns, and col2im_images is im2col_images' adjoint (<cols(x), c> = <x, col2im(c)>)."""

import numpy as np
import pytest

from autogradcli.ops.im2col import col2im, col2im_images, im2col, im2col_images, images_scratch

# (x shape, kernel, stride, pad (top, bottom, left, right), dilation): the first six take the
# shifted path (stride 1, output as wide as the input), the rest the strided view
GEOMETRIES = [
    ((2, 3, 5, 6), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((2, 2, 6, 7), (2, 3), (1, 1), (0, 1, 1, 1), (1, 1)),  # 'same' for an even kernel
    ((1, 2, 9, 8), (3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),
    ((2, 2, 4, 4), (1, 5), (1, 1), (0, 0, 2, 2), (1, 1)),
    ((2, 2, 6, 5), (3, 3), (1, 1), (0, 0, 1, 1), (1, 1)),  # fewer rows out: no center tap
    ((1, 2, 2, 2), (5, 5), (1, 1), (2, 2, 2, 2), (1, 1)),  # offsets that reach nothing
    ((2, 3, 7, 6), (3, 2), (2, 2), (1, 1, 1, 1), (1, 1)),
    ((2, 2, 6, 7), (3, 3), (1, 1), (0, 0, 0, 0), (1, 2)),
    ((2, 2, 6, 6), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1)),  # disjoint windows
]


def _channel_major_as_images(cols, n):
    return cols.reshape(cols.shape[0], n, -1).transpose(1, 0, 2)


@pytest.mark.parametrize("shape, kernel, stride, pad, dil", GEOMETRIES)
def test_im2col_images_equals_channel_major(shape, kernel, stride, pad, dil):
    x = np.random.default_rng(0).standard_normal(shape)
    got = im2col_images(x, kernel, stride, pad, dil)
    want = _channel_major_as_images(im2col(x, kernel, stride, pad, dil), shape[0])
    np.testing.assert_array_equal(got, want)
    out = np.full(got.shape, np.nan)  # into a given buffer: every entry written
    assert im2col_images(x, kernel, stride, pad, dil, out) is out
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("shape, kernel, stride, pad, dil", GEOMETRIES)
def test_col2im_images_is_the_adjoint(shape, kernel, stride, pad, dil):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    cols_shape = im2col_images(x, kernel, stride, pad, dil).shape
    c = rng.standard_normal(cols_shape)
    want = col2im(
        np.ascontiguousarray(c.transpose(1, 0, 2)).reshape(cols_shape[1], -1),
        shape,
        kernel,
        stride,
        pad,
        dil,
    )
    out = np.full(shape, np.nan)
    got = col2im_images(c.copy(), shape, kernel, stride, pad, dil, out)
    assert got is out
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    lhs = np.vdot(im2col_images(x, kernel, stride, pad, dil), c)
    np.testing.assert_allclose(lhs, np.vdot(x, got), rtol=1e-12)


def test_images_float32_stays_float32():
    x = np.ones((2, 2, 4, 4), np.float32)
    cols = im2col_images(x, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1))
    assert cols.dtype == np.float32
    out = np.empty_like(x)
    col2im_images(cols, x.shape, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), out)
    # each pixel is reached by as many kernel offsets as stay inside the image
    np.testing.assert_array_equal(out[0, 0, 0], [4, 6, 6, 4])
    np.testing.assert_array_equal(out[0, 0, 1], [6, 9, 9, 6])


@pytest.mark.parametrize("shape, kernel, stride, pad, dil", GEOMETRIES)
def test_im2col_images_in_row_chunks(shape, kernel, stride, pad, dil):
    """Chunks of ``rows`` output rows: (N, Ho/rows, K, rows*Wo), the same columns regrouped."""
    x = np.random.default_rng(2).standard_normal(shape)
    whole = im2col_images(x, kernel, stride, pad, dil)
    n, k, _ = whole.shape
    ho = _out_rows(shape, kernel, stride, pad, dil)
    wo = whole.shape[2] // ho
    for rows in [r for r in (1, 2, 3) if ho % r == 0]:
        got = im2col_images(x, kernel, stride, pad, dil, rows=rows)
        assert got.shape == (n, ho // rows, k, rows * wo)
        want = whole.reshape(n, k, ho // rows, rows * wo).transpose(0, 2, 1, 3)
        np.testing.assert_array_equal(got, want)


def _out_rows(shape, kernel, stride, pad, dil):
    return (shape[2] + pad[0] + pad[1] - dil[0] * (kernel[0] - 1) - 1) // stride[0] + 1


@pytest.mark.parametrize("shape, kernel, stride, pad, dil", GEOMETRIES[:6])
def test_reused_scratch_then_a_shorter_block(shape, kernel, stride, pad, dil):
    """The padded planes reused: after a full block, a shorter one (its planes' columns hidden
    or restored per kernel column, the previous block's planes still past its end) gives the
    columns a fresh buffer gives."""
    rng = np.random.default_rng(4)
    first = rng.standard_normal((3, *shape[1:])) * 100
    second = rng.standard_normal((2, *shape[1:]))
    scratch = images_scratch(np, first.shape, kernel, stride, pad, dil, first.dtype)
    im2col_images(first, kernel, stride, pad, dil, scratch=scratch)
    got = im2col_images(second, kernel, stride, pad, dil, scratch=scratch)
    np.testing.assert_array_equal(got, im2col_images(second, kernel, stride, pad, dil))
    im2col_images(first, kernel, stride, pad, dil, scratch=scratch)
    assert len(scratch.windows) == 2  # one sliding-window view per block size, built once


def test_im2col_images_on_the_strict_device(strict_cuda):
    """The shifted path (planes, strips, sliding window) through the array seam only."""
    shape, kernel, stride, pad, dil = GEOMETRIES[0]
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    xd = strict_cuda.asarray(x)
    scratch = images_scratch(strict_cuda, shape, kernel, stride, pad, dil, xd.dtype)
    for _ in range(2):  # the second call reuses the planes and their window
        got = im2col_images(xd, kernel, stride, pad, dil, rows=1, scratch=scratch)
        want = im2col_images(x, kernel, stride, pad, dil, rows=1)
        np.testing.assert_array_equal(strict_cuda.asnumpy(got), want)
