"""bfloat16 as a real dtype (ml_dtypes): PyTorch's promotion table, op results that stay
bfloat16 with torch's values within bfloat16 rounding, gradients in bfloat16, printing,
checkpoints and a small model trained side by side with torch."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import autogradcli as ag
import autogradcli.nn.functional as AF

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16"]
DTYPES += ["float32", "float64"]
BF16_EPS = 2.0**-8  # bfloat16 keeps 8 significant bits


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _name(dtype):
    return str(dtype).split(".")[-1]


def test_promotion_table_and_can_cast_equal_torchs(torch):
    for a, b in itertools.product(DTYPES, DTYPES):
        ours = ag.promote_types(getattr(ag, a), getattr(ag, b))
        theirs = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert _name(ours) == _name(theirs), (a, b)
        assert ag.can_cast(getattr(ag, a), getattr(ag, b)) == torch.can_cast(
            getattr(torch, a), getattr(torch, b)
        ), (a, b)


@pytest.mark.parametrize("other", [2, 2.5, True, "int64_0d", "float64_0d", "float16"])
def test_result_type_with_scalars_and_0d_tensors(torch, other):
    def operand(lib):
        if other == "int64_0d":
            return lib.tensor(3)
        if other == "float64_0d":
            return lib.tensor(3.0, dtype=lib.float64)
        if other == "float16":
            return lib.ones(2, dtype=lib.float16)
        return other

    ours = ag.result_type(ag.ones(2, dtype=ag.bfloat16), operand(ag))
    theirs = torch.result_type(torch.ones(2, dtype=torch.bfloat16), operand(torch))
    assert _name(ours) == _name(theirs)
    assert _name((ag.ones(2, dtype=ag.bfloat16) + operand(ag)).dtype) == _name(theirs)


_X = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
_Y = np.random.default_rng(1).standard_normal((6, 5)).astype(np.float32)
_W = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
_T = np.array([0, 2, 1, 3])

OPS = {
    "add": lambda L, F, a, b: a + a,
    "mul_scalar": lambda L, F, a, b: a * 2.5,
    "div": lambda L, F, a, b: a / 3,
    "matmul": lambda L, F, a, b: a @ b,
    "bmm": lambda L, F, a, b: a[None] @ b[None],
    "addmm": lambda L, F, a, b: L.addmm(L.ones(4, 5, dtype=L.bfloat16), a, b),
    "linear": lambda L, F, a, b: F.linear(a, L.tensor(_W).to(L.bfloat16)),
    "sum": lambda L, F, a, b: a.sum(),
    "mean": lambda L, F, a, b: a.mean(1),
    "var": lambda L, F, a, b: a.var(1),
    "exp": lambda L, F, a, b: a.exp(),
    "log": lambda L, F, a, b: (a.abs() + 1).log(),
    "tanh": lambda L, F, a, b: a.tanh(),
    "sigmoid": lambda L, F, a, b: a.sigmoid(),
    "relu": lambda L, F, a, b: F.relu(a),
    "gelu": lambda L, F, a, b: F.gelu(a),
    "softmax": lambda L, F, a, b: F.softmax(a, -1),
    "log_softmax": lambda L, F, a, b: F.log_softmax(a, -1),
    "layer_norm": lambda L, F, a, b: F.layer_norm(a, (6,)),
    "where_scalar": lambda L, F, a, b: L.where(a > 0, a, 0.0),
    "conv2d": lambda L, F, a, b: F.conv2d(a.reshape(1, 1, 4, 6), a[:3, :3].reshape(1, 1, 3, 3)),
    "embedding": lambda L, F, a, b: F.embedding(L.tensor(_T), a),
    "cross_entropy": lambda L, F, a, b: F.cross_entropy(a, L.tensor(_T)),
    "mse_loss": lambda L, F, a, b: F.mse_loss(a, a.detach() * 0.5),
    "cumsum": lambda L, F, a, b: a.cumsum(1),
    "norm": lambda L, F, a, b: a.norm(),
    "cat": lambda L, F, a, b: L.cat([a, a]),
}


def _leaf(lib, arr):
    return lib.tensor(arr).to(lib.bfloat16).requires_grad_()


def _close(ours, theirs, bits=3):
    """Equal within a few bfloat16 roundings of the larger magnitude (torch accumulates in
    float32 and rounds once; numpy's order of operations differs)."""
    ours = ours.detach().float().numpy()
    theirs = theirs.detach().float().numpy()
    scale = max(float(np.abs(theirs).max()), 1.0)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=bits * BF16_EPS * scale)


@pytest.mark.parametrize("op", sorted(OPS))
def test_op_results_and_gradients_stay_bfloat16_with_torchs_values(torch, op):
    import torch.nn.functional as TF

    a1, b1 = _leaf(ag, _X), _leaf(ag, _Y)
    a2, b2 = _leaf(torch, _X), _leaf(torch, _Y)
    out1, out2 = OPS[op](ag, AF, a1, b1), OPS[op](torch, TF, a2, b2)
    assert out1.dtype == ag.bfloat16 and out2.dtype == torch.bfloat16
    _close(out1, out2)
    weights = np.random.default_rng(3).standard_normal(tuple(out2.shape)).astype(np.float32)
    (out1.float() * ag.tensor(weights)).sum().backward()
    (out2.float() * torch.tensor(weights)).sum().backward()
    assert a1.grad.dtype == ag.bfloat16
    _close(a1.grad, a2.grad, bits=6)


def test_explicit_float32_results_stay_float32(torch):
    for lib in (ag, torch):
        t = lib.ones(3, dtype=lib.bfloat16)
        assert _name(t.float().dtype) == "float32"
        assert _name(t.to(lib.float32).dtype) == "float32"
        assert _name(t.sum(dtype=lib.float32).dtype) == "float32"
        assert _name(lib.softmax(t, 0, dtype=lib.float32).dtype) == "float32"
        assert _name((t + lib.ones(3)).dtype) == "float32"
        assert _name((t + lib.ones(3, dtype=lib.float16)).dtype) == "float32"


def test_repr_tolist_item_and_numpy_as_torch(torch):
    values = [[1.5, -2.25, 3.14159], [1e-3, 100.7, 0.0]]
    ours, theirs = ag.tensor(values, dtype=ag.bfloat16), torch.tensor(values, dtype=torch.bfloat16)
    assert repr(ours) == repr(theirs).replace("torch.", "autogradcli.")
    assert ours.tolist() == theirs.tolist()
    assert ours[0, 2].item() == theirs[0, 2].item()
    assert ours.element_size() == 2 and ours.is_floating_point()
    with pytest.raises(TypeError) as e2:
        theirs.numpy()
    with pytest.raises(TypeError) as e1:
        ours.numpy()
    assert str(e1.value) == str(e2.value)


def test_creation_and_default_dtype():
    assert ag.zeros(2, dtype=ag.bfloat16).dtype == ag.bfloat16
    assert ag.randn(2, dtype="bfloat16").dtype == ag.bfloat16
    assert ag.tensor([1.0]).bfloat16().dtype == ag.bfloat16
    ag.set_default_dtype(ag.bfloat16)
    try:
        assert ag.tensor([1.0]).dtype == ag.bfloat16
    finally:
        ag.set_default_dtype(ag.float32)


def test_checkpoint_round_trip_is_bit_exact(tmp_path):
    model = ag.nn.Linear(3, 2).bfloat16()
    ag.save(model.state_dict(), tmp_path / "m.pt")
    loaded = ag.load(tmp_path / "m.pt")
    for key, value in model.state_dict().items():
        assert loaded[key].dtype == ag.bfloat16
        assert np.array_equal(loaded[key].float().numpy(), value.float().numpy())


def test_a_bfloat16_tensor_refuses_cuda_clearly(strict_cuda):
    with pytest.raises(TypeError, match="bfloat16 tensors stay on the CPU"):
        ag.ones(2, dtype=ag.bfloat16).cuda()


@pytest.mark.parametrize("optimizer", ["SGD", "AdamW"])
def test_a_bfloat16_model_trains_as_torchs_does(torch, optimizer):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((16, 5)).astype(np.float32)
    y = rng.integers(0, 3, 16)
    losses = {}
    for lib in (ag, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
        for p, arr in zip(model.parameters(), _shared_weights(), strict=True):
            with lib.no_grad():
                p.copy_(lib.tensor(arr))
        model = model.to(lib.bfloat16)
        opt = getattr(lib.optim, optimizer)(model.parameters(), lr=0.05)
        xb, yb = lib.tensor(x).to(lib.bfloat16), lib.tensor(y)
        run = []
        for _ in range(4):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            run.append(loss.float().item())
        assert all(p.dtype == lib.bfloat16 for p in model.parameters())
        losses[lib.__name__] = run
    np.testing.assert_allclose(losses["autogradcli"], losses["torch"], rtol=0.02)
    assert losses["autogradcli"][-1] < losses["autogradcli"][0]


def _shared_weights():
    rng = np.random.default_rng(5)
    shapes = [(8, 5), (8,), (3, 8), (3,)]
    return [(rng.standard_normal(s) * 0.4).astype(np.float32) for s in shapes]
