"""What :func:`~.function_check.check_function` found about one custom Function.

A :class:`FunctionCheckReport` holds the checklist (:class:`CheckItem`: pass, fail or skip, with
a detail line), one :class:`PairResult` per (output, input) pair and order, each with its worst
failing elements and kinks (:class:`ElementResult`), the inputs it ran on (:class:`InputInfo`) and
the exceptions the user's code raised. ``to_dict()`` is the JSON document ``agrad gradcheck
--json`` writes; a tool that draws its own report reads the dataclasses.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "CheckItem",
    "CheckOptions",
    "ElementResult",
    "FunctionCheckReport",
    "InputInfo",
    "PairResult",
]

PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass(frozen=True)
class CheckOptions:
    """How the checks run: finite-difference step, tolerances, order and mode, and the limits
    above which a Jacobian is only checked in fast mode (``v^T J u``), never built dense."""

    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3
    nondet_tol: float = 0.0
    order: int = 1
    fast: bool = False
    seed: int = 0
    max_jacobian: int = 1 << 20  # dense Jacobian elements (all pairs) a full check may build
    max_full_numel: int = 1 << 14  # input or output elements a full check visits one by one
    max_work: int = 1 << 29  # v^T J check: forward calls x (input + output elements), at most

    def validate(self) -> None:
        """Raise ValueError naming the first option out of range (nan and inf included)."""
        if not (math.isfinite(self.eps) and self.eps > 0):
            raise ValueError(f"eps must be a finite number > 0, got {self.eps!r}")
        for name in ("atol", "rtol", "nondet_tol"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.order not in (1, 2):
            raise ValueError(f"order must be 1 or 2, got {self.order!r}")
        if min(self.max_jacobian, self.max_full_numel, self.max_work) < 1:
            raise ValueError("max_jacobian, max_full_numel and max_work must be >= 1")


@dataclass
class CheckItem:
    """One line of the checklist."""

    name: str
    status: str  # "pass" | "fail" | "skip"
    detail: str = ""


@dataclass
class InputInfo:
    """One argument of forward: a tensor's shape and dtype, or another value's repr."""

    name: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    requires_grad: bool = False
    value: str | None = None  # repr of a non-tensor argument

    def to_dict(self) -> dict[str, Any]:
        if self.shape is None:
            return {"name": self.name, "value": self.value}
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "requires_grad": self.requires_grad,
        }


@dataclass
class ElementResult:
    """One Jacobian element, ``d output[output_index] / d input[input_index]``: a failure, or a
    kink (``left``/``right``: the one-sided slopes, which differ)."""

    output: tuple[int, ...]
    input: tuple[int, ...]
    where: str  # "y[1, 0] w.r.t. b[0]"
    numerical: float
    analytical: float
    difference: float
    allowed: float
    left: float | None = None
    right: float | None = None


@dataclass
class PairResult:
    """The comparison for one (output, input) pair at one order.

    ``mode`` is ``"full"`` (every Jacobian element compared; ``worst``, ``kinks`` and
    ``diagnosis`` filled), ``"vjp"`` (``v^T J`` compared at ``n_elements`` input elements, all or
    a random sample of ``input_numel``) or ``"fast"`` (one projection ``v^T J u``: ``numerical``,
    ``analytical``, ``allowed``; ``n_failed`` is None when it fails, as the elements are unknown).
    """

    order: int
    output: str
    input: str
    mode: str
    output_shape: tuple[int, ...]
    input_shape: tuple[int, ...]
    ok: bool
    max_abs_error: float
    max_rel_error: float | None
    n_elements: int
    n_failed: int | None
    n_kinks: int = 0
    nondet_max_diff: float = 0.0
    diagnosis: str | None = None
    worst: list[ElementResult] = field(default_factory=list)
    kinks: list[ElementResult] = field(default_factory=list)
    numerical: float | None = None  # fast mode: v^T J u by finite differences
    analytical: float | None = None  # fast mode: v^T J u from backward
    allowed: float | None = None  # fast mode: the tolerance on their difference
    input_numel: int | None = None  # vjp mode: the input's elements (n_elements were checked)


@dataclass
class FunctionCheckReport:
    """Everything checked on one Function: ``ok`` is False when any check failed."""

    function: str
    inputs: list[InputInfo]
    options: CheckOptions
    checks: list[CheckItem] = field(default_factory=list)
    pairs: list[PairResult] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)  # raised by the user's code

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    @property
    def failed(self) -> list[CheckItem]:
        return [c for c in self.checks if c.status == FAIL]

    def check(self, name: str) -> CheckItem:
        """The checklist item whose name starts with ``name``."""
        for c in self.checks:
            if c.name.startswith(name):
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible: non-finite floats become strings ("nan", "inf")."""
        return {
            "function": self.function,
            "ok": self.ok,
            "inputs": [i.to_dict() for i in self.inputs],
            "settings": _jsonable(asdict(self.options)),
            "checks": [asdict(c) for c in self.checks],
            "pairs": [_jsonable(asdict(p)) for p in self.pairs],
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
