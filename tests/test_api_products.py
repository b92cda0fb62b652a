"""Products and index/selection helpers (issue 21): ``mv``, ``addmm`` & co, ``inner``,
``tensordot``, ``kron``, ``cross``, ``select``, ``masked_select``, ``tril_indices``, ``rot90``,
``diff``, ``nansum``/``nanmean``, ``kthvalue``, ``quantile``, ``isin``, ``take``,
``index_fill``, ``diag_embed``, ``fmod``, against PyTorch on identical data."""

import warnings

import pytest
from oracle import check
from same_as_torch import same_error, same_values

import autogradcli as ag

PRODUCTS = [
    lambda m, a, b: m.mv(a, b[0]),
    lambda m, a, b: m.addmm(a[:, :2], a, b.t(), beta=0.5, alpha=2),
    lambda m, a, b: m.addmv(a[0, :2], a[:2], b[1], beta=0),
    lambda m, a, b: m.baddbmm(a[:, :2].unsqueeze(0), a.unsqueeze(0), b.t().unsqueeze(0), alpha=-1),
    lambda m, a, b: m.addbmm(a[:, :2], a.unsqueeze(0), b.t().unsqueeze(0)),
    lambda m, a, b: m.inner(a, b),
    lambda m, a, b: m.tensordot(a, b, dims=([1], [1])),
    lambda m, a, b: m.tensordot(a, b.t(), dims=1),
    lambda m, a, b: m.kron(a, b[:, :2]),
    lambda m, a, b: m.cross(a, b, dim=1),
    lambda m, a, b: a.select(1, -1) * b.select(0, 1)[:2],
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", PRODUCTS, ids=range(len(PRODUCTS)))
def test_products_match_torch(fn, dtype):
    check(fn, (2, 3), (2, 3), dtype=dtype, gradgrad=dtype == "float64")


SELECTIONS = [
    lambda m, x: m.masked_select(x, x > 0),
    lambda m, x: x.masked_select(m.tensor([True, False, True])),
    lambda m, x: m.rot90(x) + 0,
    lambda m, x: x.rot90(2, (1, 0)) + 0,
    lambda m, x: m.rot90(x, -1, (0, 1)) + 0,
    lambda m, x: m.diff(x),
    lambda m, x: x.diff(n=2, dim=0, prepend=x[:1], append=x[-1:]),
    lambda m, x: m.kthvalue(x, 2, 1).values,
    lambda m, x: m.quantile(x, 0.3),
    lambda m, x: m.quantile(x, m.tensor([0.25, 0.5, 1.0], dtype=x.dtype), dim=1, keepdim=True),
    lambda m, x: m.quantile(x, 0.4, dim=0, interpolation="midpoint"),
    lambda m, x: m.take(x, m.tensor([[0, 5], [-1, 2]])),
    lambda m, x: x.index_fill(1, m.tensor([0, 2]), -1.0),
    lambda m, x: m.diag_embed(x),
    lambda m, x: m.diag_embed(x, offset=-1, dim1=0, dim2=2),
    lambda m, x: m.fmod(x * 3, 1.5) + m.fmod(x, x[:1] + 3),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", SELECTIONS, ids=range(len(SELECTIONS)))
def test_selections_match_torch(fn, dtype):
    check(fn, (3, 3), dtype=dtype, gradgrad=False)


def _same(case, kind=None):
    return same_values(case) if kind is None else same_error(case, kind)


def test_index_results_and_errors_match_torch():
    _same(lambda m: m.tril_indices(3, 4, -1))
    _same(lambda m: m.triu_indices(4, 3, 1, dtype=m.int32))
    _same(lambda m: m.isin(m.tensor([1, 2, 3]), m.tensor([2, 5])))
    _same(lambda m: m.isin(m.tensor([[1, 2], [3, 4]]), m.tensor([4, 1]), invert=True))
    _same(lambda m: m.nansum(m.tensor([[1.0, float("nan")], [2.0, 3.0]]), dim=1))
    _same(lambda m: m.nanmean(m.tensor([[1.0, float("nan")], [2.0, 3.0]])))
    _same(lambda m: m.diff(m.tensor([1, 3, 6, 10]), n=2))
    _same(lambda m: m.diff(m.tensor([True, False, False])))
    _same(lambda m: m.fmod(m.tensor([-7, 7]), 3))
    _same(lambda m: m.kthvalue(m.tensor([[3.0, 1.0, 2.0]]), 1, keepdim=True).indices)
    _same(lambda m: m.ones(2, 3).select(1, 5), IndexError)
    _same(lambda m: m.kthvalue(m.ones(3), 4), RuntimeError)
    _same(lambda m: m.quantile(m.ones(3), 1.5), RuntimeError)
    _same(lambda m: m.quantile(m.ones(3), 0.5, interpolation="cubic"), RuntimeError)
    _same(lambda m: m.tensordot(m.ones(2, 3), m.ones(2, 3), dims=([1], [1, 0])), RuntimeError)
    _same(lambda m: m.cross(m.ones(2, 4), m.ones(2, 4), dim=1), RuntimeError)
    _same(lambda m: m.rot90(m.ones(3), 1, (0, 1)), RuntimeError)
    _same(lambda m: m.take(m.ones(2, 3), m.tensor([6])), IndexError)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ag.cross(ag.ones(2, 3), ag.ones(2, 3))
    assert tuple(out.shape) == (2, 3) and "without specifying the dim arg is deprecated" in str(
        caught[0].message
    )


SCANS = [
    lambda m, x: m.cummax(x, 0).values,
    lambda m, x: x.cummin(dim=1).values,
    lambda m, x: m.logcumsumexp(x, 1),
    lambda m, x: m.diagflat(x[0], 1),
    lambda m, x: m.block_diag(x, x[:1, :2], x[0, 0]),
    lambda m, x: m.cartesian_prod(x[0], x[1, :2]),
    lambda m, x: m.msort(x),
    lambda m, x: m.float_power(x, 2),
    lambda m, x: (x * 1).fill_diagonal_(0.5),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", SCANS, ids=range(len(SCANS)))
def test_scans_and_layouts_match_torch(fn, dtype):
    check(fn, (3, 3), dtype=dtype, gradgrad=False)


def test_scan_indices_and_non_differentiable_match_torch():
    ties = [[1.0, 3.0, 3.0, 2.0, 4.0], [5.0, 5.0, 1.0, 1.0, 0.0]]
    same_values(lambda m: m.cummax(m.tensor(ties), 1).indices)
    same_values(lambda m: m.cummin(m.tensor(ties), 1).indices)
    same_values(lambda m: m.cummax(m.tensor([3, 1, 4]), 0).values)
    same_values(lambda m: m.logcumsumexp(m.tensor([-float("inf"), 0.0, 1000.0]), 0))
    same_values(lambda m: m.signbit(m.tensor([-0.0, 1.0, -2.0])))
    same_values(lambda m: m.heaviside(m.tensor([-1.0, 0.0, 2.0]), m.tensor([0.5])))
    same_values(lambda m: m.float_power(m.tensor([2]), 2))
    same_values(lambda m: m.zeros(7, 3).fill_diagonal_(1, wrap=True))
    same_values(lambda m: m.zeros(7, 3).fill_diagonal_(1))
    same_values(lambda m: m.zeros(2, 2, 2).fill_diagonal_(3))
    same_values(lambda m: m.cartesian_prod(m.tensor([1, 2])))
    same_error(lambda m: m.zeros(2, 3, 2).fill_diagonal_(1))
