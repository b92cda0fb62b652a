"""Shared fixtures: ``strict_cuda`` installs the strict cupy stand-in as the CUDA module.

    def test_something(strict_cuda):
        x = ag.randn(3, device="cuda")  # a StrictArray underneath: numpy calls on it raise

``oracle.check`` runs every CPU comparison a second time on the stand-in by itself (set
``AGRAD_NO_STRICT=1`` to skip that second pass).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from strict_xp import StrictArray, strict_cupy
from strict_xp import strict_cuda as _strict_cuda

__all__ = ["StrictArray", "strict_cupy"]


@pytest.fixture
def strict_cuda() -> Iterator[Any]:
    """``device='cuda'`` backed by the strict stand-in for the test; restored afterwards."""
    with _strict_cuda() as xp:
        yield xp
