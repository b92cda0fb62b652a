"""Complex tensors: dtypes and PyTorch's promotion, creation, repr, the memory-sharing views
(view_as_real/view_as_complex, .real/.imag) and the errors, each against torch."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import autogradcli as ag

DTYPES = ["bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64"]
DTYPES += ["complex64", "complex128"]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _name(dtype):
    return str(dtype).split(".")[-1]


def _raises_like(torch, fn):
    """Run ``fn`` on both libraries; both raise the same type with the same message."""
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(ag)
    theirs_text = str(theirs.value).splitlines()[0].replace("torch.", "autogradcli.")
    assert str(ours.value).splitlines()[0] == theirs_text


def test_dtype_objects_and_aliases(torch):
    assert ag.cfloat is ag.complex64 and ag.cdouble is ag.complex128
    for name in ("complex64", "complex128"):
        ours, theirs = getattr(ag, name), getattr(torch, name)
        assert ours.is_complex and not ours.is_floating_point and ours.is_signed
        assert ours.itemsize == theirs.itemsize
        assert repr(ours) == f"autogradcli.{name}"
    assert not ag.float32.is_complex and not ag.int64.is_complex and not ag.bfloat16.is_complex


def test_promotion_table_with_complex_equals_torchs(torch):
    for a, b in itertools.product(DTYPES, DTYPES):
        if "complex" not in a + b:
            continue
        ours = ag.promote_types(getattr(ag, a), getattr(ag, b))
        assert _name(ours) == _name(torch.promote_types(getattr(torch, a), getattr(torch, b)))
        assert ag.can_cast(getattr(ag, a), getattr(ag, b)) == torch.can_cast(
            getattr(torch, a), getattr(torch, b)
        ), (a, b)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ones(2, dtype=m.float64) * 1j,  # a complex scalar keeps float64's precision
        lambda m: m.ones(2) * (1 + 2j),
        lambda m: m.ones(2, dtype=m.int64) * 1j,
        lambda m: m.ones(2, dtype=m.float64) * m.tensor(1j),  # 0-d complex64 over dim float64
        lambda m: m.ones(2, dtype=m.complex64) * m.tensor(1.0, dtype=m.float64),
        lambda m: m.ones(2, dtype=m.int32) + m.tensor(1j, dtype=m.complex128),
        lambda m: m.ones(2, dtype=m.complex64) + m.ones(2, dtype=m.float64),
        lambda m: m.ones(2, dtype=m.complex128) / 2,
    ],
)
def test_result_dtypes_with_scalars_and_0d_tensors(torch, make):
    assert _name(make(ag).dtype) == _name(make(torch).dtype)


def test_creation_infers_and_keeps_complex_dtypes(torch):
    cases = [
        lambda m: m.tensor([1 + 2j, 3.5]),
        lambda m: m.tensor(2j),
        lambda m: m.tensor([[1, 2j]], dtype=m.complex128),
        lambda m: m.tensor(np.array([1j])),  # a numpy complex128 array keeps complex128
        lambda m: m.zeros(2, dtype=m.cfloat),
        lambda m: m.tensor([1.0, 2.0]).to(m.complex64),
    ]
    for make in cases:
        ours, theirs = make(ag), make(torch)
        assert _name(ours.dtype) == _name(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    x = ag.tensor([1 + 1j])
    assert x.is_complex() and ag.is_complex(x) and not x.is_floating_point()
    assert not ag.is_complex(ag.ones(1))


def test_default_complex_follows_the_default_float(torch):
    old = ag.get_default_dtype()
    ag.set_default_dtype(ag.float64)
    try:
        assert ag.tensor([1j]).dtype is ag.complex128
        assert (ag.ones(2, dtype=ag.int64) * 1j).dtype is ag.complex128
    finally:
        ag.set_default_dtype(old)


@pytest.mark.parametrize(
    "data",
    [
        [1 + 2j, -0.5j, 3.25],
        [-0.5j, 1],
        [1e-5 + 1j, -100.0 + 2j],
        [float("nan") + 1j, 2 - 3.5j],
        [[1 + 1j] * 5] * 2,
        3 - 4j,
        [0j],
    ],
)
def test_repr_equals_torchs(torch, data):
    assert repr(ag.tensor(data)) == repr(torch.tensor(data)).replace("torch.", "autogradcli.")


@pytest.mark.parametrize("shape", [(3, 30), (1100,), (2, 600), (8, 3, 50), (2, 0)])
def test_repr_of_wrapped_and_summarized_tensors_equals_torchs(torch, shape):
    rng = np.random.default_rng(0)
    data = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    theirs = repr(torch.tensor(data)).replace("torch.", "autogradcli.")
    assert repr(ag.tensor(data)) == theirs


def test_repr_of_complex128_and_requires_grad(torch):
    for make in (
        lambda m: m.tensor([[1 + 2j, 3 - 4j]], dtype=m.complex128),
        lambda m: m.tensor([1.5, 2j], requires_grad=True),
    ):
        assert repr(make(ag)) == repr(make(torch)).replace("torch.", "autogradcli.")


def test_float_repr_width_ignores_negative_zero(torch):
    for data in ([-0.0, 1.25], [-0.0, 1.0], [float("inf"), -2.5, 0.0]):
        assert repr(ag.tensor(data)) == repr(torch.tensor(data))


def test_view_as_real_and_view_as_complex_share_memory(torch):
    z = ag.tensor([1 + 2j, 3 - 4j])
    r = ag.view_as_real(z)
    assert r.shape == (2, 2) and r.dtype is ag.float32
    r[1, 1] = 7.0
    assert z[1].item() == 3 + 7j
    f = ag.arange(12, dtype=ag.float64).reshape(3, 2, 2)[:, 1]  # strided rows, last dim dense
    c = ag.view_as_complex(f)
    theirs = torch.view_as_complex(torch.arange(12, dtype=torch.float64).reshape(3, 2, 2)[:, 1])
    assert c.dtype is ag.complex128
    np.testing.assert_array_equal(c.numpy(), theirs.numpy())
    c[0] = 5j
    assert f[0].tolist() == [0.0, 5.0]


def test_real_and_imag_are_settable_views(torch):
    ours, theirs = ag.tensor([1 + 2j, 3 - 4j]), torch.tensor([1 + 2j, 3 - 4j])
    for m, z in ((ag, ours), (torch, theirs)):
        z.imag[0] = 9.0
        z.real = m.tensor([-1.0, -2.0])
        assert z.real.dtype == m.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    plain = ag.ones(2)
    assert plain.real is plain and ag.real(plain) is plain and plain.conj() is plain


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.view_as_real(m.ones(2)),
        lambda m: m.view_as_complex(m.ones(2, 3)),
        lambda m: m.view_as_complex(m.ones(2, 4)[:, ::2]),
        lambda m: m.view_as_complex(m.ones(3, 2).t()),
        lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.int64)),
        lambda m: m.view_as_complex(m.ones(6)[1:5].reshape(2, 2)),
        lambda m: m.ones(2).imag,
        lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
        lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
        lambda m: m.polar(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
        lambda m: (m.tensor([1j], requires_grad=True) * 2).sum().backward(),
    ],
)
def test_errors_equal_torchs(torch, fn):
    _raises_like(torch, fn)


def test_complex_polar_angle_conj_values(torch):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)).astype(np.float32)
    for fn in (
        lambda m: m.complex(m.tensor(a), m.tensor(b)),
        lambda m: m.polar(m.tensor(a).abs(), m.tensor(b)),
        lambda m: m.angle(m.complex(m.tensor(a), m.tensor(b))),
        lambda m: m.angle(m.tensor(a)),
        lambda m: m.conj(m.complex(m.tensor(a), m.tensor(b))),
        lambda m: m.complex(m.tensor(a), m.tensor(b)).abs(),
        lambda m: m.sgn(m.complex(m.tensor(a), m.tensor(b))),
    ):
        ours, theirs = fn(ag), fn(torch)
        assert _name(ours.dtype) == _name(theirs.dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.resolve_conj().numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, z: z.max(),
        lambda m, z: z.min(0),
        lambda m, z: z.amax(),
        lambda m, z: z < z,
        lambda m, z: z >= 0,
        lambda m, z: m.relu(z),
        lambda m, z: z.clamp(0, 1),
        lambda m, z: z.sort(),
        lambda m, z: z.argsort(),
        lambda m, z: z.topk(1),
        lambda m, z: z.argmax(),
        lambda m, z: m.maximum(z, z),
        lambda m, z: m.minimum(z, z),
        lambda m, z: z.sign(),
    ],
)
def test_ops_without_complex_meaning_refuse_it_as_torch_does(torch, fn):
    _raises_like(torch, lambda m: fn(m, m.tensor([1 + 2j, 2 - 1j])))


def test_cast_to_real_warns_as_torch_and_gradients_cross_the_cast(torch):
    results = []
    for m in (ag, torch):
        z = m.tensor([1 + 2j, -3j], requires_grad=True)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with pytest.warns(UserWarning, match="Casting complex values to real discards"):
            real = z.float()
        (real.sum() + (x.to(m.complex64) * (1 + 1j)).abs().sum()).backward()
        results.append((real.detach().numpy(), z.grad.numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, 1e-6)
    # torch warns once a process for copy_: ours warns each time, and keeps the real part
    with pytest.warns(UserWarning, match="Casting complex values to real discards"):
        assert ag.ones(2).copy_(ag.tensor([1j, 2])).tolist() == [0.0, 2.0]
    assert torch.ones(2).copy_(torch.tensor([1j, 2])).tolist() == [0.0, 2.0]


def test_random_complex_draws_have_torchs_dtype_and_spread(torch):
    ag.manual_seed(0)
    z = ag.randn(4000, dtype=ag.complex64)
    assert z.dtype is ag.complex64 and ag.randn_like(z[:2]).dtype is ag.complex64
    # randn: each part has variance 1/2 (E|z|^2 = 1), as torch.randn(..., dtype=cfloat)
    assert abs(z.real.var().item() - 0.5) < 0.05 and abs(z.imag.var().item() - 0.5) < 0.05
    u = ag.rand(4000, dtype=ag.cdouble)
    assert u.dtype is ag.complex128 and u.real.min().item() >= 0 and u.imag.max().item() < 1
    assert abs(u.imag.mean().item() - 0.5) < 0.05
    assert repr(ag.rand(1, dtype=ag.cfloat, requires_grad=True)).endswith("requires_grad=True)")


def test_full_complex_conversions_closeness_and_modules_as_torch(torch):
    for fn in (
        lambda m: m.full((2,), 1j),
        lambda m: m.isclose(m.tensor([1j, 1]), m.tensor([1j + 1e-9, 1 + 1j])),
        lambda m: m.ones(2, dtype=m.cfloat).add_(1j),
    ):
        ours, theirs = fn(ag), fn(torch)
        assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert complex(ag.tensor(1 + 2j)) == 1 + 2j
    assert ag.nn.Linear(2, 2).to(ag.cfloat).weight.dtype is ag.complex64


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.ones(2).add_(1j),
        lambda m: m.ones(2).mul_(m.tensor([1j, 2])),
        lambda m: m.ones(2, dtype=m.int64).add_(m.tensor([1j, 2])),
    ],
)
def test_in_place_complex_results_into_real_tensors_raise_as_torch(torch, fn):
    _raises_like(torch, fn)
