"""Tensor functions and methods the corpus uses (issue 21): ``repeat_interleave``,
``nonzero``/``argwhere``, ``triu_``/``tril_``, ``where`` with Python scalars, numpy keyword
names (``axis``/``keepdims``), ``swapaxes``/``movedim`` and ``meshgrid``, against PyTorch."""

import warnings

import numpy as np
import pytest
from oracle import check
from same_as_torch import same_error as _same_error
from same_as_torch import same_values as _same_values

import autogradcli as ag


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_repeat_interleave_matches_torch(dtype):
    check(lambda m, x: m.repeat_interleave(x, 2), (2, 3), dtype=dtype)
    check(lambda m, x: x.repeat_interleave(3, dim=1), (2, 2), dtype=dtype)
    check(lambda m, x: x.repeat_interleave(m.tensor([1, 0, 2]), dim=-1), (2, 3), dtype=dtype)
    check(lambda m, x: x.repeat_interleave(m.tensor([2]), dim=0, output_size=4), (2, 3))
    check(lambda m, x: m.repeat_interleave(x, m.tensor([1, 2, 0, 1])), (2, 2), dtype=dtype)


def test_repeat_interleave_counts_and_errors_match_torch():
    _same_values(lambda m: m.repeat_interleave(m.tensor([2, 0, 1])))
    _same_values(lambda m: m.tensor(5).repeat_interleave(3))
    _same_values(lambda m: m.tensor([[1, 2]], dtype=m.int32).repeat_interleave(2, dim=0))
    x = lambda m: m.ones(2, 3)
    _same_error(lambda m: x(m).repeat_interleave(m.tensor([1, 2, 3]), dim=0))
    _same_error(lambda m: x(m).repeat_interleave(-1))
    _same_error(lambda m: x(m).repeat_interleave(m.tensor([1, -2]), dim=0))
    _same_error(lambda m: x(m).repeat_interleave(m.tensor([[1, 2]]), dim=0))
    _same_error(lambda m: x(m).repeat_interleave(2, dim=1, output_size=5))
    _same_error(lambda m: x(m).repeat_interleave(m.tensor([1.0, 2.0]), dim=0), NotImplementedError)
    _same_error(lambda m: x(m).repeat_interleave(2, dim=2), IndexError)


def test_nonzero_and_argwhere_match_torch():
    data = [[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]
    _same_values(lambda m: m.tensor(data).nonzero())
    _same_values(lambda m: m.tensor(data).nonzero(as_tuple=True))
    _same_values(lambda m: m.nonzero(m.tensor(data), as_tuple=True))
    _same_values(lambda m: m.argwhere(m.tensor(data)))
    _same_values(lambda m: m.tensor(data).argwhere())
    for value in (0.0, 3.0):
        _same_values(lambda m, v=value: m.tensor(v).nonzero())
        _same_values(lambda m, v=value: m.tensor(v).nonzero(as_tuple=True))
    _same_values(lambda m: m.zeros(2, 3).nonzero())


@pytest.mark.parametrize("name", ["triu_", "tril_"])
def test_triangle_in_place_matches_torch(name):
    check(lambda m, x: getattr(x * 1.0, name)(1), (3, 4))
    check(lambda m, x: getattr(x * 1.0, name)(diagonal=-1), (3, 4), dtype="float32", gradgrad=False)
    _same_values(lambda m: getattr(m.tensor([[1, 2], [3, 4]]), name)(-1))
    _same_error(lambda m: getattr(m.ones(3, requires_grad=True), name)())
    _same_error(lambda m: getattr(m.ones(3), name)())
    x = ag.ones(2, 2)
    assert getattr(x, name)() is x


@pytest.mark.parametrize(
    "a, b", [(1.0, 0), (1, 0), (True, False), (True, 0), (0, 2.5), (2**40, -1), (1.5, 2.5)]
)
def test_where_with_two_python_scalars_matches_torch(a, b):
    _same_values(lambda m: m.where(m.tensor([True, False, True]), a, b))


def test_where_with_one_python_scalar_matches_torch():
    check(lambda m, x: m.where(x > 0, x, 0.0), (3, 4))
    check(lambda m, x: m.where(x > 0, 1, x), (3, 4), dtype="float32")
    _same_values(lambda m: m.where(m.tensor([True, False]), m.tensor([1, 2]), 0.5))
    _same_values(lambda m: m.where(m.tensor([True, False]), 7, m.tensor([1, 2], dtype=m.int32)))


NUMPY_KEYWORDS = [
    lambda m, x: m.sum(x, axis=1, keepdims=True),
    lambda m, x: x.sum(axis=0),
    lambda m, x: x.mean(axis=-1, keepdims=True),
    lambda m, x: m.amax(x, axis=0, keepdims=True),
    lambda m, x: x.max(axis=1).values,
    lambda m, x: m.softmax(x, axis=1),
    lambda m, x: m.cat([x, x], axis=1),
    lambda m, x: m.stack([x, x], axis=0),
    lambda m, x: x.cumsum(axis=0),
    lambda m, x: x.unsqueeze(axis=0),
    lambda m, x: m.logsumexp(x, axis=1),
    lambda m, x: x.std(axis=0, keepdims=True),
]


@pytest.mark.parametrize("case", NUMPY_KEYWORDS, ids=range(len(NUMPY_KEYWORDS)))
def test_numpy_keyword_names_match_torch(case):
    check(case, (2, 3), gradgrad=False)


def test_numpy_keywords_on_integer_results_and_conflicts():
    data = [[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]
    _same_values(lambda m: m.argmax(m.tensor(data), axis=1))
    _same_values(lambda m: m.tensor(data).argmin(axis=0, keepdims=True))
    _same_values(lambda m: m.tensor(data).sort(axis=1).indices)
    _same_values(lambda m: m.any(m.tensor(data) > 4, axis=1))
    _same_error(lambda m: m.tensor(data).sum(dim=0, axis=1), TypeError)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_axis_moves_match_torch(dtype):
    check(lambda m, x: m.swapaxes(x, 0, 2), (2, 3, 4), dtype=dtype)
    check(lambda m, x: x.swapdims(-1, 0), (2, 3, 4), dtype=dtype)
    check(lambda m, x: x.swapaxes(axis0=1, axis1=2), (2, 3, 4), dtype=dtype)
    check(lambda m, x: m.movedim(x, 0, -1), (2, 3, 4), dtype=dtype)
    check(lambda m, x: x.moveaxis((0, 1), (2, 0)), (2, 3, 4), dtype=dtype)
    check(lambda m, x: m.moveaxis(x, [-1], [1]), (2, 3, 4), dtype=dtype)


def test_axis_move_errors_match_torch():
    x = lambda m: m.ones(2, 3)
    _same_error(lambda m: m.movedim(x(m), (0, 1), (0,)))
    _same_error(lambda m: m.movedim(x(m), (0, 0), (0, 1)))
    _same_error(lambda m: m.movedim(x(m), (0, 1), (1, 1)))
    _same_error(lambda m: m.movedim(x(m), 2, 0), IndexError)
    _same_values(lambda m: m.movedim(m.tensor(1.0), 0, 0))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_meshgrid_matches_torch(dtype):
    check(lambda m, a, b: m.meshgrid(a, b, indexing="ij"), (3,), (2,), dtype=dtype)
    check(lambda m, a, b: m.meshgrid([a, b], indexing="xy"), (3,), (2,), dtype=dtype)
    check(lambda m, a, b, c: m.meshgrid(a, b, c, indexing="xy"), (3,), (2,), (4,), dtype=dtype)
    check(lambda m, a: m.meshgrid(a, indexing="xy"), (3,), dtype=dtype)
    _same_values(lambda m: m.meshgrid(m.tensor(1.0), m.tensor([4.0, 5.0]), indexing="ij"))


def test_meshgrid_errors_and_warning_match_torch(monkeypatch):
    a = lambda m: m.tensor([1.0, 2.0, 3.0])
    _same_error(lambda m: m.meshgrid(a(m), a(m), indexing="foo"))
    _same_error(lambda m: m.meshgrid(indexing="ij"))
    _same_error(lambda m: m.meshgrid(a(m), a(m).long(), indexing="ij"))
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        ag.meshgrid(ag.ones(2, 2), indexing="ij")
    from autogradcli.ops import grids

    monkeypatch.setattr(grids, "_WARNED", [False])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = ag.meshgrid(a(ag), ag.tensor([4.0, 5.0]))
        ag.meshgrid(a(ag), a(ag))
        ag.meshgrid(a(ag), a(ag), indexing="ij")
    assert [str(w.message) for w in caught] == [
        "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."
    ]
    assert caught[0].category is UserWarning and caught[0].filename == __file__
    assert tuple(first[0].shape) == (3, 2)  # "ij" when left out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rearranging_methods_match_torch(dtype):
    check(lambda m, x: x.unfold(1, 2, 1), (3, 4), dtype=dtype)
    check(lambda m, x: x.unfold(0, 2, 2), (5, 2), dtype=dtype)
    check(lambda m, x: x.unfold(-1, 3, 2), (2, 3, 7), dtype=dtype)
    check(lambda m, x: m.tile(x, (2,)), (2, 3), dtype=dtype)
    check(lambda m, x: x.tile(2, 1, 3), (2, 3), dtype=dtype)
    check(lambda m, x: m.ravel(x.t()), (2, 3), dtype=dtype)
    check(lambda m, x: m.fliplr(x), (2, 3), dtype=dtype)
    check(lambda m, x: x.flipud(), (2, 3), dtype=dtype)
    check(lambda m, x: x.diagonal(), (3, 4), dtype=dtype)
    check(lambda m, x: m.diagonal(x, -1, 2, 0), (3, 2, 4), dtype=dtype)
    check(lambda m, x: x.diagonal(offset=2, dim1=-1, dim2=-2), (2, 3, 4), dtype=dtype)
    check(lambda m, x: m.trace(x), (3, 4), dtype=dtype)
    check(lambda m, a, b: m.outer(a, b), (3,), (4,), dtype=dtype)
    check(lambda m, a, b: a.ger(b), (2,), (3,), dtype=dtype)


def test_rearranging_errors_match_torch():
    _same_error(lambda m: m.ones(3, 4).unfold(1, 5, 1))
    _same_error(lambda m: m.ones(3, 4).unfold(1, 2, 0))
    _same_error(lambda m: m.trace(m.ones(2, 2, 2)))
    _same_error(lambda m: m.outer(m.ones(2, 2), m.ones(2)))
    _same_error(lambda m: m.fliplr(m.ones(2)))
    _same_error(lambda m: m.ones(2, 3).diagonal(0, 1, 1))
    _same_values(lambda m: m.ones(2, 3).diagonal(5))
    _same_values(lambda m: m.tensor(3.0).unfold(0, 1, 1))


def test_casts_and_real_parts_match_torch():
    data = [-1.5, 0.0, 2.7, 300.0]
    for name in ("byte", "char", "short"):
        _same_values(lambda m, n=name: getattr(m.tensor(data[:3]), n)())
    x = ag.ones(2)
    assert ag.real(x) is x and not ag.is_complex(x) and not x.is_complex()
    assert ag.is_floating_point(x) and not ag.is_floating_point(ag.tensor([1]))
    _same_error(lambda m: m.imag(m.ones(2)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_index_add_matches_torch(dtype):
    index = np.array([0, 2, 0])
    check(lambda m, x, i, s: m.index_add(x, 0, i, s), (3, 2), index, (3, 2), dtype=dtype)
    check(lambda m, x, i, s: x.index_add(1, i, s, alpha=-2), (2, 3), index, (2, 3), dtype=dtype)
    check(lambda m, x, i, s: (x * 1).index_add_(0, i, s), (3, 2), index, (3, 2), dtype=dtype)
    _same_error(lambda m: m.zeros(3).index_add(0, m.tensor([0, 1]), m.ones(3)))
    with pytest.raises(IndexError, match=r"^index out of range in self: index 5 is out of bounds"):
        ag.zeros(3).index_add(0, ag.tensor([5]), ag.ones(1))  # torch's words, and which index


def test_random_fills_integers_in_torch_ranges():
    ag.manual_seed(0)
    x = ag.zeros(2000)
    assert x.random_(3) is x
    assert set(x.tolist()) == {0.0, 1.0, 2.0}
    x.random_(5, 8)
    assert set(x.tolist()) == {5.0, 6.0, 7.0}
    x.random_()
    assert x.min().item() >= 0 and x.max().item() <= 2**24 and x.max().item() > 2**20
    assert x.dtype == ag.float32
    ints = ag.zeros(100, dtype=ag.int64).random_(-3, 0)
    assert set(ints.tolist()) <= {-3, -2, -1} and ints.dtype == ag.int64
    _same_error(lambda m: m.zeros(2).random_(3, 3))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ag.zeros(2, requires_grad=True).random_(3)


def test_deprecated_resize_and_storage_offset_match_torch():
    torch = pytest.importorskip("torch")
    for m in (ag, torch):
        with pytest.warns(UserWarning, match="^non-inplace resize is deprecated$"):
            out = m.arange(12.0).reshape(3, 4).resize(2, 6)
        assert tuple(out.shape) == (2, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, x: x.resize(6), (2, 3))
        _same_error(lambda m: m.ones(3, 4).resize(5))
    for make in (lambda x: x[1:], lambda x: x.t(), lambda x: x[:, 2], lambda x: x[2, 1:]):
        assert (
            make(ag.arange(12.0).reshape(3, 4)).storage_offset()
            == make(torch.arange(12.0).reshape(3, 4)).storage_offset()
        )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_index_copy_and_cdist_match_torch(dtype):
    index = np.array([2, 0])
    check(lambda m, x, i, s: m.index_copy(x, 0, i, s), (3, 2), index, (2, 2), dtype=dtype)
    check(lambda m, x, i, s: (x * 1).index_copy_(1, i, s), (2, 3), index, (2, 2), dtype=dtype)
    check(lambda m, a, b: m.cdist(a, b), (3, 4), (5, 4), dtype=dtype, gradgrad=False)
    check(lambda m, a, b: m.cdist(a, b, p=1), (2, 3, 4), (2, 2, 4), dtype=dtype, gradgrad=False)
    _same_error(lambda m: m.zeros(3).index_copy(0, m.tensor([[0]]), m.ones(1)), IndexError)
    _same_error(lambda m: m.zeros(3).index_copy(0, m.tensor([0], dtype=m.int32), m.ones(1)))
    _same_error(lambda m: m.zeros(3).index_copy(0, m.tensor([0, 1]), m.ones(3)), IndexError)
    _same_error(lambda m: m.cdist(m.ones(3), m.ones(2, 3)))
    _same_error(lambda m: m.cdist(m.ones(2, 3), m.ones(2, 4)))


def test_bernoulli_pin_memory_init_aliases_and_to_empty():
    torch = pytest.importorskip("torch")
    ag.manual_seed(0)
    x = ag.zeros(4000)
    assert x.bernoulli_(0.25) is x and abs(x.mean().item() - 0.25) < 0.03
    assert set(x.tolist()) == {0.0, 1.0}
    probs = ag.tensor([0.0, 1.0] * 10)
    assert ag.zeros(20).bernoulli_(probs).tolist() == probs.tolist()
    _same_error(lambda m: m.zeros(2).bernoulli_(1.5))
    assert not ag.ones(2).is_pinned()
    if not ag.cuda.is_available():
        _same_error(lambda m: m.ones(2).pin_memory())
    for name in ("constant", "uniform", "xavier_normal"):
        args = (3.0,) if name == "constant" else ()
        with pytest.warns(FutureWarning) as ours:
            getattr(ag.nn.init, name)(ag.empty(2, 3), *args)
        with pytest.warns(FutureWarning) as theirs:
            getattr(torch.nn.init, name)(torch.empty(2, 3), *args)
        assert str(ours[0].message) == str(theirs[0].message)
    layer = ag.nn.Linear(2, 3)
    weight = layer.weight
    assert layer.to_empty(device="cpu") is layer and layer.weight is weight
    assert tuple(layer.weight.shape) == (3, 2) and layer.weight.dtype == ag.float32


def test_sdpa_kernel_accepts_backends_as_torch():
    torch = pytest.importorskip("torch")
    from autogradcli.nn.attention import SDPBackend, sdpa_kernel

    assert [b.name for b in SDPBackend] == [
        n
        for n in (
            "ERROR",
            "MATH",
            "FLASH_ATTENTION",
            "EFFICIENT_ATTENTION",
            "CUDNN_ATTENTION",
            "OVERRIDEABLE",
        )
    ]
    assert SDPBackend.MATH.value == torch.nn.attention.SDPBackend.MATH.value
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        q = ag.ones(1, 2, 3, 4)
        assert ag.nn.functional.scaled_dot_product_attention(q, q, q).shape == (1, 2, 3, 4)
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        sdpa_kernel("math").__enter__()


def test_storage_describes_the_viewed_memory_as_torch():
    torch = pytest.importorskip("torch")
    for m in (ag, torch):
        base = m.arange(6.0).reshape(2, 3)
        view = base[1:]
        with pytest.warns(UserWarning, match="^TypedStorage is deprecated"):
            s = view.storage()
        assert (s.size(), len(s), s.element_size(), s.nbytes()) == (6, 6, 4, 24)
        assert s.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and s[4] == 4.0
        assert s.data_ptr() == view.data_ptr() - view.storage_offset() * 4
        assert str(s.dtype).split(".")[-1] == "float32" and str(s.device) == "cpu"
        assert view.untyped_storage().nbytes() == 24
        assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        assert base.clone().untyped_storage().data_ptr() != base.untyped_storage().data_ptr()
