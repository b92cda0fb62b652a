"""sort/argsort/topk/cumprod, einsum, addmm/addcmul/addcdiv and the linalg norms against PyTorch
(forward, gradients and second-order gradients, float64 and float32, and on the strict cupy
stand-in through ``check``), plus their errors in PyTorch's words."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import check

import autogradcli as ag

DTYPES = ["float64", "float32"]
# distinct values (sort order is then unique, so the indices must agree with torch's exactly)
DISTINCT = np.random.default_rng(3).permutation(24).reshape(2, 3, 4).astype(np.float64) / 7.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.sort(),
        lambda m, x: x.sort(dim=1, descending=True),
        lambda m, x: m.sort(x, 0),
        lambda m, x: x.argsort(dim=-1).double(),
        lambda m, x: m.argsort(x, dim=1, descending=True).double(),
        lambda m, x: x.topk(2),
        lambda m, x: x.topk(3, dim=1, largest=False),
        lambda m, x: m.topk(x, 1, 0),
        lambda m, x: x.cumprod(1),
        lambda m, x: m.cumprod(x, -1),
    ],
)
def test_sorting_matches_torch(fn, dtype):
    check(fn, DISTINCT, dtype=dtype)


def test_cumprod_with_zeros_has_torch_gradient():
    check(lambda m, x: x.cumprod(1), np.array([[2.0, 0.0, 3.0, 0.5], [0.0, 0.0, 1.5, 2.0]]))


def test_sort_ties_are_stable_and_return_named_tuples():
    torch = pytest.importorskip("torch")
    data = [3.0, 1.0, 3.0, 2.0, 1.0]
    for descending in (False, True):
        ours = ag.tensor(data).sort(descending=descending, stable=True)
        ref = torch.tensor(data).sort(descending=descending, stable=True)
        assert ours.values.tolist() == ref.values.tolist()
        assert ours.indices.tolist() == ref.indices.tolist()
        assert ours.indices.dtype == ag.int64
    v, i = ag.tensor(data).topk(2)
    assert v.tolist() == [3.0, 3.0] and sorted(i.tolist()) == [0, 2]


def test_topk_k_out_of_range_error():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as ref:
        torch.ones(3).topk(4)
    with pytest.raises(RuntimeError, match=str(ref.value)):
        ag.ones(3).topk(4)
    assert ag.ones(3).topk(3).values.shape == (3,)  # k == size is just inside


def test_sort_keeps_int_dtype():
    x = ag.tensor([3, 1, 2])
    assert x.sort().values.tolist() == [1, 2, 3] and x.sort().values.dtype == ag.int64
    assert ag.tensor([1, 0, 1], dtype=ag.uint8).sort(descending=True).values.tolist() == [1, 1, 0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("ij,jk", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("i,i->", [(4,), (4,)]),
        ("i,j->ij", [(3,), (4,)]),
        ("ij->ji", [(2, 3)]),
        ("ij->", [(2, 3)]),
        ("ij->j", [(2, 3)]),
        ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
        ("b h i d, b h j d -> b h i j", [(2, 2, 3, 4), (2, 2, 5, 4)]),
        ("ik,kj,jl->il", [(2, 3), (3, 4), (4, 2)]),
    ],
)
def test_einsum_matches_torch(eq, shapes, dtype):
    n = len(shapes)
    check(lambda m, *xs: m.einsum(eq, *xs), *shapes, dtype=dtype)
    if n == 2:
        check(lambda m, *xs: m.einsum(eq, [*xs]), *shapes, dtype=dtype)  # operands as a list


def test_einsum_errors():
    with pytest.raises(ValueError, match="more operands"):
        ag.einsum("ij->i", ag.ones(2, 2), ag.ones(2, 2))
    with pytest.raises(RuntimeError, match="number of subscripts"):
        ag.einsum("ijk->i", ag.ones(2, 2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_ops_match_torch(dtype):
    check(lambda m, b, x, y: m.addmm(b, x, y), (4,), (3, 2), (2, 4), dtype=dtype)
    check(
        lambda m, b, x, y: m.addmm(b, x, y, beta=0.5, alpha=2.0),
        (3, 4),
        (3, 2),
        (2, 4),
        dtype=dtype,
    )
    check(lambda m, a, x, y: m.addcmul(a, x, y, value=0.5), (3,), (3,), (3,), dtype=dtype)
    check(lambda m, a, x, y: a.addcdiv(x, y.exp()), (3,), (3,), (3,), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.linalg.norm(x),
        lambda m, x: m.linalg.norm(x, dim=1),
        lambda m, x: m.linalg.norm(x, ord=1),
        lambda m, x: m.linalg.norm(x, ord=float("inf")),
        lambda m, x: m.linalg.norm(x, ord="fro"),
        lambda m, x: m.linalg.norm(x, ord=-1, keepdim=True),
        lambda m, x: m.linalg.vector_norm(x),
        lambda m, x: m.linalg.vector_norm(x, ord=3, dim=0, keepdim=True),
        lambda m, x: m.linalg.matrix_norm(x),
        lambda m, x: m.linalg.matrix_norm(x, ord=-float("inf")),
        lambda m, x: m.norm(x),
    ],
)
def test_linalg_norms_match_torch(fn, dtype):
    check(fn, DISTINCT[0] - 1.0, dtype=dtype)


def test_linalg_norm_errors_match_torch():
    torch = pytest.importorskip("torch")
    for call in (
        lambda m: m.linalg.norm(m.ones(2, 3, 4), ord=2),
        lambda m: m.linalg.matrix_norm(m.ones(3)),
    ):
        with pytest.raises(RuntimeError) as ref:
            call(torch)
        with pytest.raises(RuntimeError) as ours:
            call(ag)
        assert str(ours.value) == str(ref.value)
