"""Lazy layers (``LazyLinear``, ``LazyConv1d/2d``, ``LazyBatchNorm1d/2d``) against PyTorch:
reprs before and after the first forward, the class they become, the parameters materialized in
place (an optimizer built before the first forward trains them), state_dict round trips."""

import numpy as np
import pytest

import autogradcli as ag
import autogradcli.nn as nn

CASES = [
    (lambda nn: nn.LazyLinear(4), (2, 3)),
    (lambda nn: nn.LazyLinear(4, bias=False), (5, 2, 3)),
    (lambda nn: nn.LazyConv1d(4, 3, stride=2, padding=1), (2, 3, 7)),
    (lambda nn: nn.LazyConv2d(4, 3, groups=2, bias=False), (1, 2, 5, 5)),
    (lambda nn: nn.LazyConv2d(2, (1, 2), padding="same"), (3, 4, 4)),
    (lambda nn: nn.LazyBatchNorm1d(eps=1e-3), (4, 3)),
    (lambda nn: nn.LazyBatchNorm2d(affine=False), (2, 3, 2, 2)),
    (lambda nn: nn.LazyBatchNorm1d(track_running_stats=False), (4, 3, 2)),
]


@pytest.mark.parametrize("make, shape", CASES, ids=range(len(CASES)))
def test_lazy_layer_matches_torch(make, shape):
    torch = pytest.importorskip("torch")
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    assert ours.has_uninitialized_params() == theirs.has_uninitialized_params()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    params = list(ours.parameters())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out_theirs = theirs(torch.tensor(x))
    out_ours = ours(ag.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__  # became Linear, Conv2d...
    assert repr(ours) == repr(theirs)
    assert all(a is b for a, b in zip(params, ours.parameters()))
    assert all(type(p) is nn.Parameter for p in params)
    for (k, a), (k2, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert (
            k == k2 and tuple(a.shape) == tuple(b.shape) and str(a.dtype)[-5:] == str(b.dtype)[-5:]
        )
    # same parameters -> same output
    ours.load_state_dict({k: ag.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    ours(ag.tensor(x))
    theirs(torch.tensor(x))
    np.testing.assert_allclose(
        ours(ag.tensor(x)).detach().numpy(),
        theirs(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    assert out_ours.shape == tuple(out_theirs.shape)


def test_lazy_initialisation_follows_the_default_init_and_dtype():
    ag.manual_seed(0)
    layer = nn.LazyLinear(200, dtype=ag.float64)
    layer(ag.ones(1, 50, dtype=ag.float64))
    w = layer.weight.detach().numpy()
    assert layer.weight.dtype == ag.float64 and w.shape == (200, 50)
    bound = 1 / np.sqrt(50)  # kaiming_uniform(a=sqrt(5)) on fan_in 50
    assert w.min() >= -bound and w.max() <= bound and w.std() > bound / 2
    norm = nn.LazyBatchNorm2d()
    norm(ag.ones(2, 3, 1, 1))
    assert norm.weight.tolist() == [1.0] * 3 and norm.bias.tolist() == [0.0] * 3
    assert norm.num_batches_tracked.item() == 1


def test_optimizer_built_before_the_first_forward_trains_the_layer():
    model = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(1))
    opt = ag.optim.Adam(model.parameters(), lr=0.1)
    x, y = ag.randn(16, 5), ag.randn(16, 1)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert type(model[0]) is nn.Linear and model[0].in_features == 5


def test_uninitialized_parameters_refuse_shape_as_torch():
    torch = pytest.importorskip("torch")

    ours, theirs = nn.LazyLinear(2), torch.nn.LazyLinear(2)
    with pytest.raises(RuntimeError) as err_theirs:
        _ = theirs.weight.shape
    with pytest.raises(RuntimeError) as err_ours:
        _ = ours.weight.shape
    assert str(err_ours.value) == str(err_theirs.value)
    assert repr(ours.weight) == repr(theirs.weight) == "<UninitializedParameter>"
    assert repr(nn.UninitializedBuffer()) == "<UninitializedBuffer>"
    with pytest.raises(RuntimeError, match="3D \\(batched\\) input to LazyConv1d"):
        nn.LazyConv1d(2, 3)(ag.ones(1, 2, 3, 4))


def test_state_dict_of_an_initialised_layer_materializes_a_lazy_one():
    source = nn.Linear(3, 4)
    lazy = nn.LazyLinear(4)
    lazy.load_state_dict(source.state_dict())
    assert not lazy.has_uninitialized_params() and tuple(lazy.weight.shape) == (4, 3)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), source.weight.detach().numpy())
    out = lazy(ag.ones(2, 3))
    assert type(lazy) is nn.Linear
    np.testing.assert_allclose(out.detach().numpy(), source(ag.ones(2, 3)).detach().numpy())
    other = nn.LazyLinear(4)
    other.load_state_dict(nn.LazyLinear(4).state_dict())  # both lazy: nothing to copy
    assert other.has_uninitialized_params()
    with pytest.raises(RuntimeError, match="Missing key"):
        nn.LazyLinear(4).load_state_dict({"weight": source.weight.detach()})
