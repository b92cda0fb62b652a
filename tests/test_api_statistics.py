"""Reductions and counts the corpus uses (issue 21): ``var_mean``/``std_mean``, ``median``,
``count_nonzero``, ``bucketize``/``searchsorted``, ``bincount``, ``histc``, ``histogram``,
against PyTorch on identical data."""

import numpy as np
import pytest
from oracle import check
from same_as_torch import same_error, same_values


def _same(case, kind=None):
    return same_values(case) if kind is None else same_error(case, kind)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_var_mean_std_mean_median_match_torch(dtype):
    check(lambda m, x: m.var_mean(x), (3, 4), dtype=dtype)
    check(lambda m, x: m.var_mean(x, 1, keepdim=True), (3, 4), dtype=dtype)
    check(lambda m, x: m.std_mean(x, (0, 1), correction=0), (3, 4), dtype=dtype)
    check(lambda m, x: m.median(x), (3, 4), dtype=dtype)
    check(lambda m, x: x.median(), (3, 3), dtype=dtype)
    check(lambda m, x: m.median(x, 1), (3, 4), dtype=dtype)
    check(lambda m, x: x.median(dim=0, keepdim=True), (3, 4), dtype=dtype)


def test_median_indices_and_counts_match_torch():
    data = [[3.0, 1.0, 2.0, 5.0], [0.0, 0.0, 7.0, 1.0]]
    _same(lambda m: m.median(m.tensor(data), 1).indices)
    _same(lambda m: m.median(m.tensor([4, 1, 3, 2])))
    _same(lambda m: m.count_nonzero(m.tensor(data)))
    _same(lambda m: m.count_nonzero(m.tensor(data), dim=1))
    _same(lambda m: m.tensor(data).count_nonzero((0, 1)))


def test_bucketize_and_searchsorted_match_torch():
    values = [[1, 5, 9], [0, 4, 10]]
    bounds = [1, 3, 5, 7, 9]
    for right in (False, True):
        _same(lambda m, r=right: m.bucketize(m.tensor(values), m.tensor(bounds), right=r))
        _same(lambda m, r=right: m.searchsorted(m.tensor(bounds), m.tensor(values), right=r))
    _same(lambda m: m.bucketize(m.tensor([0.5, 3.0]), m.tensor([1.0, 3.0]), out_int32=True))
    _same(lambda m: m.searchsorted(m.tensor([[1, 3, 5], [2, 4, 6]]), m.tensor([[3], [5]])))
    _same(lambda m: m.searchsorted(m.tensor([1, 3, 5]), m.tensor([3]), side="right"))
    _same(lambda m: m.searchsorted(m.tensor([5, 1, 3]), m.tensor([3]), sorter=m.tensor([1, 2, 0])))
    _same(lambda m: m.bucketize(m.tensor([1]), m.tensor([[1, 2]])), RuntimeError)
    _same(
        lambda m: m.searchsorted(m.tensor([1]), m.tensor([1]), right=True, side="left"),
        RuntimeError,
    )


def test_bincount_histc_histogram_match_torch():
    _same(lambda m: m.bincount(m.tensor([0, 1, 1, 3])))
    _same(lambda m: m.bincount(m.tensor([0, 1]), minlength=4))
    _same(lambda m: m.bincount(m.tensor([0, 1, 1]), weights=m.tensor([1.0, 2.0, 3.0])))
    _same(lambda m: m.bincount(m.tensor([0, 1, 1]), weights=m.tensor([1, 2, 3])))
    _same(lambda m: m.bincount(m.tensor([], dtype=m.int64)))
    _same(lambda m: m.histc(m.tensor([1.0, 2.0, 1.0, 4.0, -1.0]), bins=4, min=0, max=3))
    _same(lambda m: m.histc(m.tensor([2.0, 2.0]), bins=4))
    _same(lambda m: m.tensor([0.1, 0.5, 0.9, 1.0]).histc(bins=2))
    _same(lambda m: m.histogram(m.tensor([1.0, 2.0, 1.0, 4.0]), bins=4))
    _same(
        lambda m: m.histogram(
            m.tensor([1.0, 2, 1, 4]), bins=m.tensor([0.0, 1.5, 5.0]), density=True
        )
    )
    _same(
        lambda m: m.histogram(
            m.tensor([1.0, 2, 1, 4]), 3, range=(0.0, 3.0), weight=m.tensor([1.0, 2, 3, 4])
        )
    )
    _same(lambda m: m.bincount(m.tensor([-1, 2])), RuntimeError)
    _same(lambda m: m.bincount(m.tensor([[1]])), RuntimeError)
    _same(lambda m: m.bincount(m.tensor([1.0])), NotImplementedError)
    _same(lambda m: m.bincount(m.tensor([0, 1]), weights=m.ones(3)), RuntimeError)
    _same(lambda m: m.histc(m.tensor([1.0]), min=3, max=1), RuntimeError)
    _same(lambda m: m.histc(m.tensor([1, 2]), bins=2), NotImplementedError)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cov_corrcoef_trapezoid_match_torch(dtype):
    check(lambda m, x: m.cov(x), (3, 5), dtype=dtype)
    check(lambda m, x: m.cov(x[0], correction=0), (3, 5), dtype=dtype)
    weights = np.array([1, 2, 1, 3, 1])
    check(lambda m, x, f: m.cov(x, fweights=f), (2, 5), weights, dtype=dtype, gradgrad=False)
    check(
        lambda m, x, a: m.cov(x, aweights=a),
        (2, 5),
        np.array([0.5, 1.0, 2.0, 1.0, 0.1]),
        dtype=dtype,
        gradgrad=False,
    )
    check(lambda m, x: m.corrcoef(x), (3, 5), dtype=dtype, gradgrad=False)
    check(lambda m, y: m.trapezoid(y), (2, 4), dtype=dtype)
    check(lambda m, y: m.trapz(y, dx=0.5, dim=0), (3, 2), dtype=dtype)
    check(
        lambda m, y, x: m.trapezoid(y, x),
        (2, 4),
        np.array([0.0, 1.0, 3.0, 3.5]),
        dtype=dtype,
        grad_inputs=[0],
    )


def test_unique_consecutive_and_sum_to_size_match_torch():
    _same(
        lambda m: m.unique_consecutive(
            m.tensor([1, 1, 2, 2, 3, 1]), return_counts=True, return_inverse=True
        )
    )
    _same(
        lambda m: m.tensor([[1, 2], [1, 2], [3, 4]]).unique_consecutive(dim=0, return_counts=True)
    )
    check(lambda m, x: x.sum_to_size(1, 3), (2, 3))
    check(lambda m, x: x.sum_to_size((2, 1)), (2, 3), dtype="float32")
