"""torch's constants, memory formats and dtype limits (finfo/iinfo), equal to torch's values."""

from __future__ import annotations

import math

import pytest

import autogradcli


def test_constants_equal_torchs() -> None:
    torch = pytest.importorskip("torch")
    for name in ("inf", "pi", "e"):
        assert getattr(autogradcli, name) == getattr(torch, name)
    assert math.isnan(autogradcli.nan) and autogradcli.newaxis is torch.newaxis is None
    x = autogradcli.arange(3.0)
    assert tuple(x[autogradcli.newaxis].shape) == (1, 3)


def test_memory_formats_repr_and_are_accepted_where_torch_takes_them() -> None:
    torch = pytest.importorskip("torch")
    for name in ("preserve_format", "contiguous_format", "channels_last", "channels_last_3d"):
        ours = getattr(autogradcli, name)
        assert repr(ours) == repr(getattr(torch, name)).replace("torch.", "autogradcli.")
    x = autogradcli.ones(1, 2, 2, 2)
    assert autogradcli.equal(x.clone(memory_format=autogradcli.preserve_format), x)
    assert x.contiguous(memory_format=autogradcli.channels_last).shape == x.shape
    z = autogradcli.zeros_like(x, memory_format=autogradcli.preserve_format)
    assert z.shape == x.shape and float(z.sum()) == 0.0


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_equals_torchs(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = autogradcli.finfo(getattr(autogradcli, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_finfo_default_dtype_and_errors() -> None:
    torch = pytest.importorskip("torch")
    assert repr(autogradcli.finfo()) == repr(torch.finfo())
    for info, dtype in (
        (autogradcli.finfo, autogradcli.int32),
        (autogradcli.iinfo, autogradcli.float32),
    ):
        with pytest.raises(TypeError, match="requires"):
            info(dtype)
    with pytest.raises(TypeError, match="not supported"):
        autogradcli.iinfo(autogradcli.bool)
    with pytest.raises(TypeError, match="must be"):
        autogradcli.finfo("float32")


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_equals_torchs(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = autogradcli.iinfo(getattr(autogradcli, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_finfo_of_an_ml_dtypes_float_equals_torchs_bfloat16() -> None:
    torch = pytest.importorskip("torch")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from autogradcli.tensor.dtype import DType

    bf16 = DType("bfloat16", ml_dtypes.bfloat16)
    bf16.is_floating_point = True  # numpy calls ml_dtypes' kind "V"; the dtype table says float
    ours, theirs = autogradcli.finfo(bf16), torch.finfo(torch.bfloat16)
    assert repr(ours) == repr(theirs)
    for attr in ("bits", "eps", "max", "min", "tiny", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
