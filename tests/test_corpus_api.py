"""APIs the corpus programs needed beyond ops: ``nn.init.orthogonal_``, ``mse_loss``'s single
``MseLossBackward0`` node, the ``nn.modules.*`` paths, ``cuda.manual_seed_all``,
``backends.cudnn``, ``serialization.safe_globals``, ``Tensor.is_xpu``, and lazily drawn epochs
of a ``RandomSampler`` with replacement."""

import numpy as np
import pytest
from oracle import check

import autogradcli as ag
import autogradcli.nn as nn


@pytest.mark.parametrize("shape", [(4, 4), (3, 6), (6, 3), (4, 2, 3, 3)])
def test_orthogonal_init(shape):
    ag.manual_seed(0)
    w = ag.empty(*shape)
    out = nn.init.orthogonal_(w, gain=2.0)
    assert out is w and w.dtype == ag.float32
    flat = w.numpy().reshape(shape[0], -1) / 2.0
    rows, cols = flat.shape
    gram = flat @ flat.T if rows <= cols else flat.T @ flat
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        nn.init.orthogonal_(ag.empty(3))


def test_orthogonal_matches_torch_given_the_same_normal_draw():
    """PyTorch's construction (QR of a normal draw, signs from R's diagonal) from identical data."""
    torch = pytest.importorskip("torch")
    draw = np.random.default_rng(1).standard_normal((3, 5))

    class Fixed:  # a Generator stand-in that returns ``draw``
        _np = type("G", (), {"standard_normal": staticmethod(lambda shape: draw.reshape(shape))})()

    ours = nn.init.orthogonal_(ag.empty(3, 5, dtype=ag.float64), generator=Fixed())
    q, r = torch.linalg.qr(torch.tensor(draw).t())
    expected = (q * torch.diag(r).sign()).t()
    np.testing.assert_allclose(ours.numpy(), expected.numpy(), atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mse_loss_one_node_matches_torch(reduction, dtype):
    check(
        lambda m, x, t: m.nn.functional.mse_loss(x, t, reduction=reduction),
        (3, 4),
        (3, 4),
        dtype=dtype,
    )
    x = ag.randn(2, 3, requires_grad=True)
    loss = nn.MSELoss(reduction=reduction)(x, ag.randn(2, 3))
    assert type(loss.grad_fn).__name__ == "MseLossBackward0"
    assert type(loss.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


def test_nn_modules_paths():
    import autogradcli.nn.modules.linear as linear_mod
    from autogradcli.nn.modules.activation import MultiheadAttention

    assert MultiheadAttention is nn.MultiheadAttention
    assert linear_mod.Linear is nn.Linear
    assert ag.nn.modules.linear.NonDynamicallyQuantizableLinear is not None
    assert ag.nn.modules.rnn.LSTM is nn.LSTM and ag.nn.modules.sparse.Embedding is nn.Embedding
    assert ag.nn.modules.transformer.TransformerEncoderLayer is nn.TransformerEncoderLayer
    assert ag.nn.modules.Linear is nn.Linear


def test_cuda_seeds_cudnn_flags_safe_globals_and_device_queries():
    ag.cuda.manual_seed_all(7)
    a = ag.randn(3)
    ag.cuda.manual_seed(7)
    np.testing.assert_array_equal(ag.randn(3).numpy(), a.numpy())
    import autogradcli.backends.cudnn as cudnn

    cudnn.benchmark = True
    assert ag.backends.cudnn.benchmark is True
    assert cudnn.is_available() is (cudnn.version() is not None)
    cudnn.benchmark = False
    with ag.serialization.safe_globals([nn.Linear]):
        assert nn.Linear in ag.serialization.get_safe_globals()
    assert nn.Linear not in ag.serialization.get_safe_globals()
    x = ag.zeros(1)
    assert x.is_xpu is False and x.is_mps is False


def test_random_sampler_with_replacement_draws_lazily():
    """minGPT's RandomSampler(replacement=True, num_samples=int(1e10)): batches come at once."""
    data = list(range(10))
    sampler = ag.utils.data.RandomSampler(data, replacement=True, num_samples=int(1e10))
    loader = ag.utils.data.DataLoader(data, sampler=sampler, batch_size=4)
    it = iter(loader)
    batches = [next(it) for _ in range(3)]
    assert all(b.shape == (4,) for b in batches)
    assert len(loader) == int(1e10) // 4


def test_random_sampler_chunks_join_into_whole_batches():
    from autogradcli.data import sampler as sampler_mod

    n = sampler_mod._CHUNK + 6  # one chunk and 6 more draws: batches straddle the boundary
    s = ag.utils.data.RandomSampler(range(3), replacement=True, num_samples=n)
    batches = list(ag.utils.data.BatchSampler(s, 7, drop_last=False))
    assert sum(len(b) for b in batches) == n
    assert all(len(b) == 7 for b in batches[:-1]) and len(batches[-1]) == n % 7 == 1
    assert len(list(iter(s))) == n
