"""``torch.testing.assert_allclose``: the deprecated predecessor of ``assert_close``, kept for old
test code with its own looser tolerances, ``equal_nan=True`` and no dtype check."""

from __future__ import annotations

import warnings
from typing import Any

from ..tensor.factory import tensor as as_tensor
from ..tensor.tensor import Tensor
from .close import _tolerances, assert_close

# assert_allclose's own defaults (rtol, atol), looser than assert_close's
_OLD_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Deprecated since PyTorch 1.12 (a FutureWarning, as PyTorch gives); use ``assert_close``."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = as_tensor(actual)
    if not isinstance(expected, Tensor):
        expected = as_tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual.dtype.name, expected.dtype.name, table=_OLD_TOLERANCES)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )
