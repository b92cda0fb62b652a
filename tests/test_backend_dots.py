"""``backend.dots.sum_of_products``: einsum on numpy, multiply-and-sum on device arrays; both
against numpy's einsum."""

import numpy as np
import pytest

from autogradcli.backend.dots import sum_of_products


@pytest.mark.parametrize(
    "subscripts, shape",
    [
        ("ij,ij->i", (5, 7)),
        ("ij,ij->j", (5, 7)),
        ("ncs,ncs->c", (2, 3, 4)),
        ("ngcs,ngcs->ng", (2, 3, 4, 5)),
        ("ngcs,ngcs->ngc", (2, 3, 4, 5)),
    ],
)
def test_matches_einsum_on_the_cpu_and_on_a_device(subscripts, shape, strict_cuda):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    want = np.einsum(subscripts, a.astype(np.float64), b.astype(np.float64))
    cpu = sum_of_products(np, subscripts, a, b)
    dev = sum_of_products(strict_cuda, subscripts, strict_cuda.asarray(a), strict_cuda.asarray(b))
    assert cpu.dtype == np.float32 and dev.dtype == np.float32
    np.testing.assert_allclose(cpu, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(strict_cuda.asnumpy(dev), want, rtol=1e-5, atol=1e-5)
