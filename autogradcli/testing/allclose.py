"""``assert_allclose``: PyTorch's deprecated predecessor of ``assert_close`` (NaNs equal, dtypes
not compared, its own looser float64 tolerances), with PyTorch's FutureWarning."""

from __future__ import annotations

import warnings
from typing import Any

from ..tensor.factory import tensor
from ..tensor.tensor import Tensor
from .close import assert_close

__all__ = ["assert_allclose"]

_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
_WARNING = (
    "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
    "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
    "instructions in https://github.com/pytorch/pytorch/issues/61844."
)


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Deprecated: :func:`assert_close` with ``equal_nan=True`` and no dtype check."""
    warnings.warn(_WARNING, FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_PRECISIONS.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(
        actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
        msg=msg or None,
    )  # fmt: skip
