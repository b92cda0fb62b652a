"""Every creation function's overloads against PyTorch: one call runs on both libraries.

Each case is ``(call, check)``: ``call(m)`` gets ``autogradcli`` or ``torch``. Both results must
agree in shape, dtype, device and requires_grad; ``check`` says how the values compare:
``"equal"`` (deterministic), ``"close"`` (float rounding may differ), ``"shape"`` (``empty``), or
``(lo, hi)`` (random draws in ``[lo, hi)``; the RNG streams are not promised to match torch's).
Where torch refuses the call, autogradcli must refuse it with the same error type.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from strict_xp import StrictArray

import autogradcli as ag

ERRORS = (TypeError, ValueError, IndexError, RuntimeError)


def _g(m: Any) -> Any:
    return m.Generator().manual_seed(0)


def _f(m: Any) -> Any:
    return m.tensor([[1.0, 2.0, 3.0]])


def _i(m: Any) -> Any:
    return m.tensor([[1, 2, 3]])


SIZED = ("zeros", "ones", "empty", "rand", "randn")

CASES: list[tuple[str, Any, Any]] = [
    # randint: (high, size), (low, high, size), keywords, dtype, generator, refusals
    ("randint_high_size", lambda m: m.randint(2, (4,)), (0, 2)),
    ("randint_low_high_size", lambda m: m.randint(3, 7, (3, 2)), (3, 7)),
    ("randint_negative_low", lambda m: m.randint(-3, 3, (50,)), (-3, 3)),
    ("randint_size_kw", lambda m: m.randint(5, size=(3,)), (0, 5)),
    ("randint_low_high_size_kw", lambda m: m.randint(1, 4, size=(2, 2)), (1, 4)),
    ("randint_all_kw", lambda m: m.randint(low=1, high=4, size=(2,)), (1, 4)),
    ("randint_high_kw", lambda m: m.randint(high=4, size=(2,)), (0, 4)),
    ("randint_list_size", lambda m: m.randint(3, [2, 2]), (0, 3)),
    ("randint_Size", lambda m: m.randint(3, m.Size([2, 1])), (0, 3)),
    ("randint_empty_size", lambda m: m.randint(3, (0,)), (0, 3)),
    ("randint_scalar_size", lambda m: m.randint(3, ()), (0, 3)),
    ("randint_dtype_int32", lambda m: m.randint(3, (4,), dtype=m.int32), (0, 3)),
    ("randint_dtype_float", lambda m: m.randint(3, (4,), dtype=m.float32), (0, 3)),
    (
        "randint_float_grad",
        lambda m: m.randint(3, (2,), dtype=m.float32, requires_grad=True),
        (0, 3),
    ),
    ("randint_generator", lambda m: m.randint(0, 9, (6,), generator=_g(m)), (0, 9)),
    ("randint_device", lambda m: m.randint(3, (2,), device="cpu"), (0, 3)),
    ("randint_low_eq_high", lambda m: m.randint(2, 2, (3,)), "error"),
    ("randint_low_gt_high", lambda m: m.randint(5, 2, (3,)), "error"),
    ("randint_no_size", lambda m: m.randint(3), "error"),
    ("randint_low_high_no_size", lambda m: m.randint(0, 3), "error"),
    ("randint_int_size", lambda m: m.randint(0, 3, 4), "error"),
    ("randint_int_grad", lambda m: m.randint(3, (2,), requires_grad=True), "error"),
    ("randint_negative_size", lambda m: m.randint(3, (-1,)), "error"),
    ("randint_bool_high_range", lambda m: m.randint(0, 300, (2,), dtype=m.uint8), "error"),
    # randperm
    ("randperm", lambda m: m.randperm(6).sort().values, "equal"),
    ("randperm_zero", lambda m: m.randperm(0), "equal"),
    ("randperm_int32", lambda m: m.randperm(5, dtype=m.int32).sort().values, "equal"),
    ("randperm_float", lambda m: m.randperm(5, dtype=m.float64).sort().values, "equal"),
    ("randperm_generator", lambda m: m.randperm(7, generator=_g(m)).sort().values, "equal"),
    ("randperm_negative", lambda m: m.randperm(-1), "error"),
    ("randperm_int_grad", lambda m: m.randperm(3, requires_grad=True), "error"),
    ("randperm_tuple", lambda m: m.randperm((3,)), "error"),
    # full: the dtype follows the fill value when none is given
    ("full_float", lambda m: m.full((2, 3), 1.5), "equal"),
    ("full_int", lambda m: m.full((2,), 7), "equal"),
    ("full_bool", lambda m: m.full((2,), True), "equal"),
    ("full_list", lambda m: m.full([2, 1], -1), "equal"),
    ("full_Size", lambda m: m.full(m.Size([3]), 0.5), "equal"),
    ("full_scalar", lambda m: m.full((), 3), "equal"),
    ("full_empty", lambda m: m.full((0, 2), 3.0), "equal"),
    ("full_kw", lambda m: m.full(size=(2,), fill_value=1.0), "equal"),
    ("full_dtype", lambda m: m.full((2,), 2, dtype=m.float64), "equal"),
    ("full_dtype_truncates", lambda m: m.full((2,), 2.7, dtype=m.int64), "equal"),
    ("full_grad", lambda m: m.full((2,), 1.0, requires_grad=True), "equal"),
    ("full_int_size", lambda m: m.full(2, 1.0), "error"),
    ("full_no_fill", lambda m: m.full((2,)), "error"),
    ("full_negative", lambda m: m.full((-2,), 1.0), "error"),
    ("full_int_grad", lambda m: m.full((2,), 1, requires_grad=True), "error"),
    # arange: int64 unless a bound or step is a float; length ceil((end - start) / step)
    ("arange_end", lambda m: m.arange(5), "equal"),
    ("arange_start_end", lambda m: m.arange(2, 6), "equal"),
    ("arange_step", lambda m: m.arange(1, 10, 3), "equal"),
    ("arange_negative_step", lambda m: m.arange(10, 0, -3), "equal"),
    ("arange_float_end", lambda m: m.arange(5.0), "equal"),
    ("arange_float_step", lambda m: m.arange(0, 1, 0.1), "close"),
    ("arange_float_start", lambda m: m.arange(0.5, 3), "equal"),
    ("arange_float_negative", lambda m: m.arange(1.0, -1.0, -0.25), "equal"),
    ("arange_length_rule", lambda m: m.arange(1, 2.5, 0.5), "equal"),
    ("arange_length_inexact", lambda m: m.arange(0, 1.0000001, 0.5), "equal"),
    ("arange_empty", lambda m: m.arange(0), "equal"),
    ("arange_empty_range", lambda m: m.arange(3, 3), "equal"),
    ("arange_end_kw", lambda m: m.arange(end=4), "equal"),
    ("arange_start_end_kw", lambda m: m.arange(start=1, end=4), "equal"),
    ("arange_all_kw", lambda m: m.arange(start=1, end=8, step=2), "equal"),
    ("arange_dtype", lambda m: m.arange(4, dtype=m.float64), "equal"),
    ("arange_float_to_int", lambda m: m.arange(0.0, 3.0, dtype=m.int64), "equal"),
    ("arange_float_grad", lambda m: m.arange(3.0, requires_grad=True), "equal"),
    ("arange_zero_step", lambda m: m.arange(0, 5, 0), "error"),
    ("arange_wrong_sign", lambda m: m.arange(5, 0), "error"),
    ("arange_wrong_sign_step", lambda m: m.arange(0, 5, -1), "error"),
    ("arange_int_grad", lambda m: m.arange(3, requires_grad=True), "error"),
    ("arange_nothing", lambda m: m.arange(), "error"),
    ("arange_nan", lambda m: m.arange(float("nan")), "error"),
    ("arange_inf", lambda m: m.arange(0, float("inf")), "error"),
    # linspace / logspace
    ("linspace", lambda m: m.linspace(0, 1, 5), "close"),
    ("linspace_one", lambda m: m.linspace(2, 3, 1), "equal"),
    ("linspace_zero", lambda m: m.linspace(0, 1, 0), "equal"),
    ("linspace_kw", lambda m: m.linspace(start=0, end=10, steps=5), "close"),
    ("linspace_down", lambda m: m.linspace(1, -1, 4), "close"),
    ("linspace_dtype", lambda m: m.linspace(-1, 1, 7, dtype=m.float64), "close"),
    ("linspace_int_dtype", lambda m: m.linspace(0, 10, 5, dtype=m.int64), "equal"),
    ("linspace_grad", lambda m: m.linspace(0, 1, 3, requires_grad=True), "close"),
    ("linspace_no_steps", lambda m: m.linspace(0, 1), "error"),
    ("linspace_negative_steps", lambda m: m.linspace(0, 1, -1), "error"),
    ("logspace", lambda m: m.logspace(0, 2, 3), "close"),
    ("logspace_base", lambda m: m.logspace(0, 3, 4, base=2), "close"),
    ("logspace_zero", lambda m: m.logspace(0, 1, 0), "equal"),
    ("logspace_dtype", lambda m: m.logspace(-1, 1, 5, dtype=m.float64), "close"),
    ("logspace_no_steps", lambda m: m.logspace(0, 1), "error"),
    # eye
    ("eye", lambda m: m.eye(3), "equal"),
    ("eye_rect_wide", lambda m: m.eye(2, 3), "equal"),
    ("eye_rect_tall", lambda m: m.eye(3, 2), "equal"),
    ("eye_zero", lambda m: m.eye(0), "equal"),
    ("eye_kw", lambda m: m.eye(n=2, m=4), "equal"),
    ("eye_dtype", lambda m: m.eye(2, dtype=m.int64), "equal"),
    ("eye_bool", lambda m: m.eye(2, dtype=m.bool), "equal"),
    ("eye_grad", lambda m: m.eye(2, requires_grad=True), "equal"),
    ("eye_negative", lambda m: m.eye(-1), "error"),
    ("eye_negative_m", lambda m: m.eye(2, -1), "error"),
    ("eye_tuple", lambda m: m.eye((2, 2)), "error"),
    # normal: (Tensor, Tensor), (Tensor, float), (float, Tensor), (float, float, size)
    ("normal_tt", lambda m: m.normal(m.zeros(3), m.ones(3)), (-10, 10)),
    ("normal_tt_broadcast", lambda m: m.normal(m.zeros(2, 1), m.ones(3)), (-10, 10)),
    ("normal_tf", lambda m: m.normal(m.zeros(3), 2.0), (-20, 20)),
    ("normal_t_default_std", lambda m: m.normal(m.zeros(3)), (-10, 10)),
    ("normal_ft", lambda m: m.normal(1.0, m.ones(2, 2)), (-10, 10)),
    ("normal_ffs", lambda m: m.normal(0.0, 1.0, (2, 3)), (-10, 10)),
    ("normal_ffs_kw", lambda m: m.normal(0.0, 1.0, size=(4,)), (-10, 10)),
    ("normal_ffs_list", lambda m: m.normal(0.0, 1.0, [2]), (-10, 10)),
    ("normal_ints", lambda m: m.normal(2, 3, size=(4,)), (-40, 40)),
    ("normal_ffs_dtype", lambda m: m.normal(0.0, 1.0, (2,), dtype=m.float64), (-10, 10)),
    ("normal_ffs_grad", lambda m: m.normal(0.0, 1.0, (2,), requires_grad=True), (-10, 10)),
    ("normal_generator", lambda m: m.normal(0.0, 1.0, (3,), generator=_g(m)), (-10, 10)),
    ("normal_t_generator", lambda m: m.normal(m.zeros(3), 1.0, generator=_g(m)), (-10, 10)),
    ("normal_zero_std", lambda m: m.normal(m.full((3,), 2.0), 0.0), "equal"),
    ("normal_std_zero_t", lambda m: m.normal(5.0, m.zeros(2)), "equal"),
    ("normal_grad_mean", lambda m: m.normal(m.zeros(3, requires_grad=True), 1.0), (-10, 10)),
    ("normal_ff", lambda m: m.normal(0.0, 1.0), "error"),
    ("normal_negative_std", lambda m: m.normal(0.0, -1.0, (2,)), "error"),
    ("normal_negative_std_t", lambda m: m.normal(m.zeros(2), -1.0), "error"),
    ("normal_negative_std_tt", lambda m: m.normal(m.zeros(2), -m.ones(2)), "error"),
    ("normal_int_mean", lambda m: m.normal(m.zeros(2, dtype=m.int64), 1.0), "error"),
    ("normal_bad_broadcast", lambda m: m.normal(m.zeros(2), m.ones(3)), "error"),
    # *_like: shape, dtype and device of the input unless given
    ("zeros_like", lambda m: m.zeros_like(_f(m)), "equal"),
    ("zeros_like_int", lambda m: m.zeros_like(_i(m)), "equal"),
    ("ones_like_dtype", lambda m: m.ones_like(_f(m), dtype=m.int64), "equal"),
    ("empty_like", lambda m: m.empty_like(_i(m)), "shape"),
    ("full_like_int_fill", lambda m: m.full_like(_f(m), 7), "equal"),
    ("full_like_truncates", lambda m: m.full_like(_i(m), 2.7), "equal"),
    ("full_like_dtype", lambda m: m.full_like(_i(m), 2.5, dtype=m.float64), "equal"),
    ("zeros_like_grad", lambda m: m.zeros_like(_f(m), requires_grad=True), "equal"),
    ("zeros_like_of_grad", lambda m: m.zeros_like(m.ones(2, requires_grad=True)), "equal"),
    ("rand_like", lambda m: m.rand_like(_f(m)), (0, 1)),
    ("randn_like", lambda m: m.randn_like(_f(m)), (-10, 10)),
    ("randn_like_dtype", lambda m: m.randn_like(_f(m), dtype=m.float64), (-10, 10)),
    ("randint_like_high", lambda m: m.randint_like(_f(m), 5), (0, 5)),
    ("randint_like_low_high", lambda m: m.randint_like(_i(m), 2, 5), (2, 5)),
    ("rand_like_int", lambda m: m.rand_like(_i(m)), "error"),
    ("randn_like_int", lambda m: m.randn_like(_i(m)), "error"),
    # new_*: the source tensor's dtype and device unless given
    ("new_zeros_args", lambda m: _f(m).new_zeros(2, 3), "equal"),
    ("new_zeros_tuple", lambda m: _i(m).new_zeros((2, 3)), "equal"),
    ("new_zeros_list", lambda m: _f(m).new_zeros([2]), "equal"),
    ("new_zeros_size_kw", lambda m: _f(m).new_zeros(size=(2,)), "equal"),
    ("new_zeros_scalar", lambda m: _f(m).new_zeros(()), "equal"),
    ("new_ones_dtype", lambda m: _f(m).new_ones(2, dtype=m.int64), "equal"),
    ("new_ones_grad", lambda m: _f(m).new_ones(2, requires_grad=True), "equal"),
    ("new_empty", lambda m: _i(m).new_empty(2, 2), "shape"),
    ("new_full_int_fill", lambda m: _f(m).new_full((2,), 3), "equal"),
    ("new_full_float_fill", lambda m: _i(m).new_full((2,), 3.5), "equal"),
    ("new_full_list", lambda m: _f(m).new_full([1, 2], 3), "equal"),
    ("new_tensor_float_src", lambda m: _f(m).new_tensor([1, 2]), "equal"),
    ("new_tensor_int_src", lambda m: _i(m).new_tensor([1.5, 2.5]), "equal"),
    ("new_tensor_dtype", lambda m: _i(m).new_tensor([1, 2], dtype=m.float64), "equal"),
    ("new_full_int_size", lambda m: _f(m).new_full(2, 3), "error"),
    # tensor / as_tensor
    ("tensor_int", lambda m: m.tensor(3), "equal"),
    ("tensor_float", lambda m: m.tensor(3.5), "equal"),
    ("tensor_bool", lambda m: m.tensor(True), "equal"),
    ("tensor_mixed", lambda m: m.tensor([1, 2.5]), "equal"),
    ("tensor_nested", lambda m: m.tensor([[1, 2], [3, 4]]), "equal"),
    ("tensor_empty", lambda m: m.tensor([]), "equal"),
    ("tensor_empty_int", lambda m: m.tensor([], dtype=m.int64), "equal"),
    ("tensor_bools", lambda m: m.tensor([True, False]), "equal"),
    ("tensor_dtype", lambda m: m.tensor([1, 2], dtype=m.float64), "equal"),
    ("tensor_truncates", lambda m: m.tensor(1.7, dtype=m.int64), "equal"),
    ("tensor_np_float64", lambda m: m.tensor(np.array([1.0, 2.0])), "equal"),
    ("tensor_np_int32", lambda m: m.tensor(np.array([1, 2], dtype=np.int32)), "equal"),
    ("tensor_np_scalar", lambda m: m.tensor(np.float64(1.5)), "equal"),
    ("tensor_grad", lambda m: m.tensor([1.0, 2.0], requires_grad=True), "equal"),
    ("tensor_list_np_float64", lambda m: m.tensor([1, np.float64(2.0)]), "equal"),
    ("tensor_list_np_float32", lambda m: m.tensor([np.float32(1.0), 2.0]), "equal"),
    ("tensor_list_np_arrays", lambda m: m.tensor([np.array([1.0]), np.array([2.0])]), "equal"),
    ("tensor_list_np_int32", lambda m: m.tensor([np.int32(2)]), "equal"),
    ("as_tensor_list", lambda m: m.as_tensor([1, 2]), "equal"),
    ("as_tensor_np", lambda m: m.as_tensor(np.array([1.0, 2.0], dtype=np.float32)), "equal"),
    ("as_tensor_dtype", lambda m: m.as_tensor([1, 2], dtype=m.float32), "equal"),
    ("tensor_ragged", lambda m: m.tensor([[1, 2], [3]]), "error"),
    ("tensor_str", lambda m: m.tensor("a"), "error"),
    ("tensor_int_grad", lambda m: m.tensor([1, 2], requires_grad=True), "error"),
    # bernoulli / multinomial
    ("bernoulli", lambda m: m.bernoulli(m.full((20,), 0.5)), (0, 2)),
    ("bernoulli_ones", lambda m: m.bernoulli(m.ones(3, dtype=m.float64)), "equal"),
    ("bernoulli_zeros", lambda m: m.bernoulli(m.zeros(2, 2)), "equal"),
    ("bernoulli_p", lambda m: m.bernoulli(m.zeros(4), 1.0), "equal"),
    ("bernoulli_generator", lambda m: m.bernoulli(m.full((5,), 0.5), generator=_g(m)), (0, 2)),
    ("bernoulli_bad_p", lambda m: m.bernoulli(m.full((3,), 1.5)), "error"),
    ("bernoulli_int_input", lambda m: m.bernoulli(m.ones(2, dtype=m.int64)), "error"),
    ("bernoulli_int_input_p", lambda m: m.bernoulli(m.ones(2, dtype=m.int64), 1.0), "equal"),
    ("bernoulli_negative_p", lambda m: m.bernoulli(m.full((3,), -0.1)), "error"),
    ("multinomial_replacement", lambda m: m.multinomial(m.tensor([0.2, 0.8]), 5, True), (0, 2)),
    ("multinomial_2d", lambda m: m.multinomial(m.ones(3, 4), 2), (0, 4)),
    ("multinomial_all", lambda m: m.multinomial(m.ones(4), 4).sort().values, "equal"),
    ("multinomial_one_class", lambda m: m.multinomial(m.tensor([0.0, 1.0]), 3, True), "equal"),
    ("multinomial_kw", lambda m: m.multinomial(m.ones(3), num_samples=2, generator=_g(m)), (0, 3)),
    ("multinomial_too_many", lambda m: m.multinomial(m.ones(2), 3), "error"),
    ("multinomial_zero", lambda m: m.multinomial(m.ones(2), 0), "error"),
    ("multinomial_negative", lambda m: m.multinomial(m.tensor([-1.0, 2.0]), 1), "error"),
    ("multinomial_3d", lambda m: m.multinomial(m.ones(1, 2, 2), 1), "error"),
]

# zeros / ones / empty / rand / randn share one set of size overloads
SIZE_CASES: list[tuple[str, Any, Any]] = [
    ("varargs", lambda f, m: f(2, 3), None),
    ("tuple", lambda f, m: f((2, 3)), None),
    ("list", lambda f, m: f([2, 3]), None),
    ("Size", lambda f, m: f(m.Size([2, 3])), None),
    ("size_kw", lambda f, m: f(size=(2, 3)), None),
    ("size_kw_list", lambda f, m: f(size=[4]), None),
    ("scalar_tuple", lambda f, m: f(()), None),
    ("scalar_size_kw", lambda f, m: f(size=()), None),
    ("zero", lambda f, m: f(0), None),
    ("zero_dim", lambda f, m: f(2, 0), None),
    ("numpy_int", lambda f, m: f(np.int64(3)), None),
    ("dtype", lambda f, m: f(2, dtype=m.float64), None),
    ("grad", lambda f, m: f(2, requires_grad=True), None),
    ("device", lambda f, m: f(2, device="cpu"), None),
    ("nothing", lambda f, m: f(), "error"),
    ("negative", lambda f, m: f(-1), "error"),
    ("negative_tuple", lambda f, m: f((2, -3)), "error"),
    ("float_size", lambda f, m: f(2.0), "error"),
    ("tuple_and_int", lambda f, m: f((2,), 3), "error"),
    ("both", lambda f, m: f(2, size=(3,)), "error"),
    ("int_size_kw", lambda f, m: f(size=3), "error"),
    ("string", lambda f, m: f("3"), "error"),
    ("nested", lambda f, m: f(((2,),)), "error"),
]
SIZE_CHECKS = {"zeros": "equal", "ones": "equal", "empty": "shape", "rand": (0, 1)}
for _fn in SIZED:
    for _name, _call, _expect in SIZE_CASES:
        _check = _expect or SIZE_CHECKS.get(_fn, (-10, 10))
        CASES.append((f"{_fn}_{_name}", lambda m, f=_fn, c=_call: c(getattr(m, f), m), _check))
CASES += [
    ("zeros_int_grad", lambda m: m.zeros(2, dtype=m.int64, requires_grad=True), "error"),
    ("ones_bool", lambda m: m.ones(2, dtype=m.bool), "equal"),
    ("zeros_int32", lambda m: m.zeros((2,), dtype=m.int32), "equal"),
    ("randn_int", lambda m: m.randn(2, dtype=m.int64), "error"),
    ("rand_int", lambda m: m.rand(2, dtype=m.int64), "error"),
    ("randn_generator", lambda m: m.randn(3, generator=_g(m)), (-10, 10)),
    ("rand_generator", lambda m: m.rand(2, 2, generator=_g(m)), (0, 1)),
    ("randn_float16", lambda m: m.randn(3, dtype=m.float16), (-10, 10)),
    ("zeros_strided", lambda m: m.zeros(2, layout=m.strided), "equal"),
    ("randint_strided", lambda m: m.randint(3, (2,), layout=m.strided), (0, 3)),
    ("rand_like_strided", lambda m: m.rand_like(_f(m), layout=m.strided), (0, 1)),
]


def _name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


def _run(call: Any, m: Any) -> tuple[Any, BaseException | None]:
    try:
        return call(m), None
    except ERRORS as e:
        return None, e


def _error_kind(e: BaseException) -> type:
    return next(k for k in ERRORS if isinstance(e, k))


@pytest.mark.parametrize("call, check", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_creation_call_matches_torch(call: Any, check: Any) -> None:
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's advice on slow list conversions
        want, want_err = _run(call, torch)
    got, got_err = _run(call, ag)
    if check == "error":
        assert want_err is not None, "the table says torch refuses this call"
    if want_err is not None:
        assert got_err is not None, f"torch refuses with {want_err!r}; autogradcli returned {got}"
        assert isinstance(got_err, _error_kind(want_err)), (got_err, want_err)
        assert str(got_err), "an error needs a message"
        return
    assert got_err is None, f"torch accepts this call; autogradcli raised {got_err!r}"
    assert isinstance(got, ag.Tensor)
    assert tuple(got.shape) == tuple(want.shape)
    assert _name(got.dtype) == _name(want.dtype)
    assert got.device.type == want.device.type
    assert got.requires_grad == want.requires_grad
    a, t = got.detach().numpy(), want.detach().numpy()
    if check == "equal":
        np.testing.assert_array_equal(a, t)
    elif check == "close":
        np.testing.assert_allclose(a, t, rtol=1e-6, atol=1e-6)
    elif isinstance(check, tuple):
        lo, hi = check
        assert a.size == 0 or (a.min() >= lo and a.max() < hi), (a, check)
        if a.dtype.kind in "iu" or _name(got.dtype).startswith("int"):
            np.testing.assert_array_equal(a, np.floor(a))


@pytest.mark.parametrize(
    "call",
    [
        lambda: ag.randint(3, (4,), device="cuda"),
        lambda: ag.randn(2, device="cuda", generator=ag.Generator().manual_seed(1)),
        lambda: ag.arange(0, 1, 0.25, device="cuda"),
        lambda: ag.randperm(4, device="cuda"),
        lambda: ag.normal(0.0, 1.0, (2,), device="cuda"),
        lambda: ag.logspace(0, 1, 3, device="cuda"),
        lambda: ag.randint_like(ag.zeros(2, device="cuda"), 3),
    ],
)
def test_creation_on_the_device_stays_there(strict_cuda: Any, call: Any) -> None:
    """A creation call on ``device='cuda'`` builds a device array (the strict stand-in refuses
    numpy calls on it), even when the draws come from a CPU ``Generator``."""
    out = call()
    assert out.device.type == "cuda"
    assert isinstance(out._data, StrictArray)


def test_same_generator_seed_repeats_the_draws() -> None:
    """Two generators with one seed give the same draws; the global stream is left alone."""
    for make in (
        lambda g: ag.randint(0, 100, (8,), generator=g),
        lambda g: ag.randn(8, generator=g),
        lambda g: ag.rand(8, generator=g),
        lambda g: ag.randperm(8, generator=g),
        lambda g: ag.normal(0.0, 1.0, (8,), generator=g),
    ):
        ag.manual_seed(5)
        before = ag.rand(3)
        ag.manual_seed(5)
        a = make(ag.Generator().manual_seed(11))
        b = make(ag.Generator().manual_seed(11))
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(ag.rand(3).numpy(), before.numpy())


def test_generator_constructor_as_torch() -> None:
    """``Generator(device='cpu')`` / ``Generator('cpu')`` as in PyTorch, with ``device``,
    ``initial_seed`` (torch's default seed) and ``seed()``; ``Generator(7)`` stays a seed."""
    torch = pytest.importorskip("torch")
    for make in (lambda m: m.Generator(), lambda m: m.Generator("cpu")):
        g, t = make(ag), make(torch)
        assert g.device.type == t.device.type == "cpu"
        assert g.initial_seed() == t.initial_seed()
    g = ag.Generator(device="cpu").manual_seed(3)
    assert g.initial_seed() == 3 and ag.Generator(7).initial_seed() == 7
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**63


@pytest.mark.parametrize(
    "call",
    [
        lambda **kw: ag.zeros(3, **kw),
        lambda **kw: ag.full((3,), 1.0, **kw),
        lambda **kw: ag.arange(3.0, **kw),
        lambda **kw: ag.linspace(0, 1, 3, **kw),
        lambda **kw: ag.eye(3, 1, **kw),
        lambda **kw: ag.randn(3, **kw),
        lambda **kw: ag.randint(5, (3,), **kw),
        lambda **kw: ag.randperm(3, **kw),
    ],
)
def test_out_and_other_layouts_are_refused_not_ignored(call: Any) -> None:
    """PyTorch writes into ``out=``; here it is refused by name rather than silently ignored
    (the caller's tensor would keep its old values), and so is a layout other than strided."""
    target = ag.zeros(3)
    with pytest.raises(TypeError, match="out="):
        call(out=target)
    assert target.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(TypeError, match="strided"):
        call(layout=ag.sparse_coo)
    assert call(layout=ag.strided).layout == ag.strided
