"""Sparse COO tensors (held dense) against PyTorch: construction with repeated coordinates,
``to_sparse``/``to_dense`` and their gradients, products with dense matrices, the queries and
the repr programs print."""

import numpy as np
import pytest

import autogradcli as ag

IDX = [[0, 1, 1, 1], [2, 0, 2, 2]]
VALS = [3.0, 4.0, 5.0, 1.0]


def test_sparse_coo_tensor_matches_torch():
    torch = pytest.importorskip("torch")
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VALS), (2, 3)).coalesce()
    a = ag.sparse_coo_tensor(ag.tensor(IDX), ag.tensor(VALS), (2, 3))
    assert a.is_sparse and a.layout is ag.sparse_coo and ag.ones(1).layout is ag.strided
    assert isinstance(ag.strided, ag.layout) and repr(ag.sparse_coo) == "autogradcli.sparse_coo"
    np.testing.assert_array_equal(a.to_dense().numpy(), t.to_dense().numpy())
    np.testing.assert_array_equal(a.indices().numpy(), t.indices().numpy())
    np.testing.assert_array_equal(a.values().numpy(), t.values().numpy())
    assert a._nnz() == t._nnz() == 3
    assert repr(a).replace("autogradcli", "torch") == repr(t)
    # numpy indices, an int64 dtype, the size inferred from the indices (the GCN/GAT programs)
    edges = np.array([[0, 1], [1, 2], [0, 1]], dtype=np.int32)
    ours = ag.sparse_coo_tensor(edges.T, ag.ones(3), dtype=ag.int64)
    theirs = torch.sparse_coo_tensor(edges.T, torch.ones(3), dtype=torch.int64)
    assert ours.dtype == ag.int64 and tuple(ours.shape) == tuple(theirs.shape) == (2, 3)
    np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
    np.testing.assert_array_equal(
        (ag.eye(3)[:2] + ours).numpy(), (torch.eye(3)[:2] + theirs).numpy()
    )


def test_products_and_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5)
    d = rng.standard_normal((4, 2))
    mt, dt = torch.tensor(m, requires_grad=True), torch.tensor(d, requires_grad=True)
    ma, da = ag.tensor(m, requires_grad=True), ag.tensor(d, requires_grad=True)
    st, sa = mt.to_sparse(), ma.to_sparse()
    assert type(sa.grad_fn).__name__ == "ToSparseBackward0"
    outs = [
        (torch.sparse.mm(st, dt), ag.sparse.mm(sa, da)),
        (torch.spmm(st, dt), ag.spmm(sa, da)),
        (st @ dt, sa @ da),
    ]
    for t, a in outs:
        assert not a.is_sparse
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), atol=1e-12)
        w = rng.standard_normal((3, 2))
        (t * torch.tensor(w)).sum().backward()
        (a * ag.tensor(w)).sum().backward()
        np.testing.assert_allclose(ma.grad.numpy(), mt.grad.numpy(), atol=1e-12)
        np.testing.assert_allclose(da.grad.numpy(), dt.grad.numpy(), atol=1e-12)
    dense = ag.ones(2, 2)
    assert dense.to_dense() is dense and not dense.is_sparse


def test_sparse_errors():
    with pytest.raises(RuntimeError, match="indices and values must have same nnz"):
        ag.sparse_coo_tensor(ag.tensor(IDX), ag.tensor([1.0]), (2, 3))
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        ag.sparse_coo_tensor(ag.tensor(IDX), ag.tensor(VALS), (1, 3))


def test_sparse_on_strict_device(strict_cuda):
    s = ag.sparse_coo_tensor(ag.tensor(IDX, device="cuda"), ag.tensor(VALS, device="cuda"), (2, 3))
    assert s.device.type == "cuda"
    out = ag.spmm(s, ag.ones(3, 2, device="cuda"))
    assert out.device.type == "cuda" and float(out.sum().cpu()) == 26.0
