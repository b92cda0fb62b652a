"""Storages, storage offsets, pin_memory, the deprecated resize / nn.init / assert_allclose
names, Module.to_empty, torch.nn.attention's sdpa_kernel and torch._dynamo: each as PyTorch
behaves on a CPU-only machine, checked against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autogradcli as ag
import autogradcli.nn.functional as F
from autogradcli.nn.attention import SDPBackend, sdpa_kernel
from autogradcli.tensor import storage as storage_module


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _pair(torch):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    return ag.tensor(data), torch.tensor(data)


@pytest.mark.parametrize(
    "view", ["t", "t[1]", "t[:, 1]", "t.t()", "t[1:, 2:]", "t.reshape(-1)[5:]", "t[2, 3]"]
)
def test_storage_offset_of_views_equals_torchs(torch, view):
    ours, theirs = _pair(torch)
    assert eval(view, {"t": ours}).storage_offset() == eval(view, {"t": theirs}).storage_offset()


def test_untyped_and_typed_storage_describe_the_shared_memory(torch):
    ours, theirs = _pair(torch)
    for t in (ours, theirs):
        u = t[1].untyped_storage()
        assert (u.nbytes(), u.size(), len(u), u.element_size()) == (48, 48, 48, 1)
        assert u.data_ptr() == t.data_ptr()
    assert ours.untyped_storage().tolist() == theirs.untyped_storage().tolist()
    storage_module._TYPED_WARNED[0] = False
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = ours[1].storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s2 = theirs[1].storage()
    assert (s.size(), len(s), s.element_size(), s.nbytes()) == (
        s2.size(),
        len(s2),
        s2.element_size(),
        s2.nbytes(),
    )
    assert s.tolist() == s2.tolist() and s[5] == s2[5] and list(s) == list(s2)
    assert s.data_ptr() == ours.data_ptr() and str(s.dtype) == "autogradcli.float32"
    assert not s.is_shared()
    ours.share_memory_()
    assert ours.storage().is_shared()


def test_pin_memory_without_an_accelerator_refuses_as_torch(torch):
    if torch.cuda.is_available():
        pytest.skip("torch sees a GPU here")
    ours, theirs = _pair(torch)
    with pytest.raises(RuntimeError) as err_theirs:
        theirs.pin_memory()
    with pytest.raises(RuntimeError) as err_ours:
        ours.pin_memory()
    assert str(err_ours.value) == str(err_theirs.value)
    assert ours.is_pinned() is theirs.is_pinned() is False


def test_deprecated_resize_reshapes_or_refuses_as_torch(torch):
    ours, theirs = _pair(torch)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        out = ours.resize(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = theirs.resize(4, 3)
        with pytest.raises(RuntimeError) as err_theirs:
            theirs.resize(5)
        with pytest.raises(RuntimeError) as err_ours:
            ours.resize(5)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert str(err_ours.value) == str(err_theirs.value)


@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "xavier_uniform"])
def test_deprecated_init_names_warn_as_torch_and_fill_as_the_new_ones(torch, name):
    args = (0.5,) if name == "constant" else ()
    with pytest.warns(FutureWarning) as theirs:
        getattr(torch.nn.init, name)(torch.empty(3, 4), *args)
    ag.manual_seed(3)
    with pytest.warns(FutureWarning) as ours:
        old = getattr(ag.nn.init, name)(ag.empty(3, 4), *args)
    assert str(ours[0].message) == str(theirs[0].message)
    assert ours[0].filename == __file__
    ag.manual_seed(3)
    new = getattr(ag.nn.init, name + "_")(ag.empty(3, 4), *args)
    np.testing.assert_array_equal(old.numpy(), new.numpy())


def test_assert_allclose_warns_and_uses_its_own_looser_tolerances(torch):
    a = ag.ones(3)
    inside, outside = a * (1 + 0.9e-4), a * (1 + 1.2e-4)  # rtol 1e-4 (+ atol 1e-5)
    with pytest.warns(FutureWarning) as ours:
        ag.testing.assert_allclose(inside, a)
    with pytest.warns(FutureWarning) as theirs:
        torch.testing.assert_allclose(torch.ones(3) * (1 + 0.9e-4), torch.ones(3))
    assert str(ours[0].message) == str(theirs[0].message)
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        ag.testing.assert_allclose(outside, a)
    with pytest.raises(AssertionError):
        ag.testing.assert_close(inside, a)  # assert_close's 1.3e-6 is stricter
    with pytest.warns(FutureWarning):
        ag.testing.assert_allclose([1.0, float("nan")], [1.0, float("nan")])  # equal_nan


def test_bfloat16_tolerance_of_assert_close_is_torchs(torch):
    a = ag.ones(4, dtype=ag.bfloat16)
    ag.testing.assert_close(a * 1.0078125, a)  # one bfloat16 step: within rtol 1.6e-2
    with pytest.raises(AssertionError):
        ag.testing.assert_close(a * 1.03125, a)
    torch.testing.assert_close(torch.ones(4).bfloat16() * 1.0078125, torch.ones(4).bfloat16())


def test_to_empty_keeps_shapes_and_dtypes(torch):
    ours = ag.nn.Sequential(ag.nn.Linear(3, 2), ag.nn.BatchNorm1d(2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    assert ours.to_empty(device="cpu") is ours
    theirs.to_empty(device="cpu")
    got = {k: (tuple(v.shape), v.dtype.name) for k, v in ours.state_dict().items()}
    want = {k: (tuple(v.shape), str(v.dtype)[6:]) for k, v in theirs.state_dict().items()}
    assert got == want
    assert all(isinstance(p, ag.nn.Parameter) for p in ours.parameters())


def test_sdpa_kernel_restores_the_choice_and_computes_the_same(torch):
    from autogradcli.nn.sdpa_backends import enabled_backends

    assert {m: int(v) for m, v in SDPBackend.__members__.items()} == {
        m: int(v) for m, v in torch.nn.attention.SDPBackend.__members__.items()
    }
    q = ag.randn(1, 2, 4, 8)
    reference = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    before = enabled_backends()
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.MATH]):
        assert enabled_backends() == [SDPBackend.MATH]
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            assert enabled_backends() == [SDPBackend.FLASH_ATTENTION]
            assert ag.backends.cuda.flash_sdp_enabled() and not ag.backends.cuda.math_sdp_enabled()
            out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        assert enabled_backends() == [SDPBackend.MATH]
    assert enabled_backends() == before
    np.testing.assert_array_equal(out.numpy(), reference.numpy())
    with pytest.raises(AssertionError) as ours, sdpa_kernel("math"):
        pass
    with pytest.raises(AssertionError) as theirs, torch.nn.attention.sdpa_kernel("math"):
        pass
    assert str(ours.value) == str(theirs.value)


def test_dynamo_reset_and_config_defaults_as_torch():
    ag._dynamo.reset()
    # torch 2.13's defaults (importing torch._dynamo to compare costs 1.5 s)
    expected = {
        "cache_size_limit": 8,
        "accumulated_cache_size_limit": 256,
        "suppress_errors": False,
    }
    assert {k: getattr(ag._dynamo.config, k) for k in expected} == expected


@pytest.mark.parametrize("device", ["cpu", "cuda:1", "meta"])
def test_default_backend_for_device_as_torch(torch, device):
    import torch.distributed

    import autogradcli.distributed

    try:
        expected = torch.distributed.get_default_backend_for_device(device)
    except ValueError as err:
        with pytest.raises(ValueError, match=str(err)):
            autogradcli.distributed.get_default_backend_for_device(device)
    else:
        assert autogradcli.distributed.get_default_backend_for_device(device) == expected


def test_module_compile_checks_its_arguments_and_changes_nothing():
    model = ag.nn.Linear(3, 2)
    x = ag.randn(4, 3)
    before = model(x)
    assert model.compile(mode="max-autotune") is None
    np.testing.assert_array_equal(model(x).detach().numpy(), before.detach().numpy())
    assert list(model.state_dict()) == ["weight", "bias"]  # no _orig_mod. prefix
