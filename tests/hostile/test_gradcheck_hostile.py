"""agrad gradcheck under hostile input: each case a real `python -m autogradcli.cli` subprocess
with a memory and time limit, asserting the exit code, the message and no traceback."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMORY_LIMIT = 1 << 30  # address space: a dense 10,000 x 10,000 float64 Jacobian (763 MiB) fails
TIME_LIMIT = 120

FUNCS = """
import sys

import autogradcli as ag
from autogradcli.autograd import Function


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class SquareWrong(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x


class Mul(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, g * x


class EmptyExample(Function):
    example_inputs = (ag.zeros(0, 3),)

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class ExitInBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        sys.exit(0)


class ExitWithTextInBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        sys.exit("bye")


class ExitInForward(Function):
    @staticmethod
    def forward(ctx, x):
        sys.exit(0)

    @staticmethod
    def backward(ctx, g):
        return g
"""


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (TIME_LIMIT, TIME_LIMIT))


@pytest.fixture
def funcs(tmp_path):
    (tmp_path / "funcs.py").write_text(textwrap.dedent(FUNCS).lstrip())
    return tmp_path


def gradcheck(cwd, *argv: str) -> subprocess.CompletedProcess:
    # one BLAS thread: OpenBLAS reserves address space per thread, which MEMORY_LIMIT counts
    env = dict(os.environ, COLUMNS="120", PYTHONPATH=REPO, OPENBLAS_NUM_THREADS="1")
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("FORCE_COLOR", None)
    env.pop("AGRAD_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "autogradcli.cli", "gradcheck", *argv],
        capture_output=True,
        text=True,
        cwd=str(cwd),
        env=env,
        timeout=TIME_LIMIT,
        preexec_fn=_limits,
    )


def assert_clean(res: subprocess.CompletedProcess) -> None:
    text = res.stdout + res.stderr
    assert "Traceback" not in text and "MemoryError" not in text, text


@pytest.mark.parametrize(
    "argv, words",
    [
        (["funcs.py:Square", "--input", "x=0"], "--input 'x=0': a tensor of shape (0,) has no"),
        (["funcs.py:Square", "-i", "x=3,0"], "--input 'x=3,0': a tensor of shape (3, 0) has no"),
        (["funcs.py:Mul", "-i", "x=0", "-i", "w=3"], "--input 'x=0'"),
        (["funcs.py:EmptyExample"], "EmptyExample: every input that requires grad is empty"),
    ],
)
def test_empty_tensor_is_nothing_to_check(funcs, argv, words):
    res = gradcheck(funcs, *argv)
    assert res.returncode == 2, res.stdout + res.stderr
    assert words in res.stderr and "nothing to check" in res.stderr
    assert_clean(res)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("x=99999999999999999999", "99,999,999,999,999,999,999 elements is more than"),
        ("x=10000001", "10,000,001 elements is more than gradcheck draws for one input"),
    ],
)
def test_huge_input_is_a_usage_error_naming_input(funcs, spec, words):
    res = gradcheck(funcs, "funcs.py:Square", "--input", spec)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"--input '{spec}'" in res.stderr and words in res.stderr
    assert_clean(res)


def test_input_size_limit_just_inside_and_outside():
    from autogradcli.cli.errors import UserError
    from autogradcli.cli.gradcheck_cmd import MAX_INPUT_NUMEL, parse_shape

    assert parse_shape(f"{MAX_INPUT_NUMEL}", "x") == (MAX_INPUT_NUMEL,)
    assert parse_shape("1", "x") == (1,)
    with pytest.raises(UserError, match="more than"):
        parse_shape(f"{MAX_INPUT_NUMEL + 1}", "x")
    with pytest.raises(UserError, match="nothing to check"):
        parse_shape("0", "x")


@pytest.mark.parametrize(
    "flag, value, words",
    [
        ("--eps", "nan", "--eps nan: must be a finite number > 0"),
        ("--eps", "0", "--eps 0.0: must be a finite number > 0"),
        ("--atol", "nan", "--atol nan: must be a finite number >= 0"),
        ("--atol", "-1e-300", "--atol -1e-300: must be a finite number >= 0"),
        ("--rtol", "nan", "--rtol nan: must be a finite number >= 0"),
        ("--nondet-tol", "nan", "--nondet-tol nan: must be a finite number >= 0"),
    ],
)
def test_non_finite_or_negative_tolerances_are_usage_errors(funcs, flag, value, words):
    res = gradcheck(funcs, "funcs.py:Square", "-i", "x=3", flag, value)
    assert res.returncode == 2, res.stdout + res.stderr
    assert words in res.stderr
    assert_clean(res)


def test_smallest_valid_tolerances_pass(funcs):
    res = gradcheck(funcs, "funcs.py:Square", "-i", "x=3", "--atol", "0", "--nondet-tol", "0")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "all checks passed" in res.stdout


def test_large_input_builds_no_dense_jacobian_and_says_so(funcs):
    res = gradcheck(funcs, "funcs.py:Square", "-i", "x=100,100")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS  Jacobian matches finite differences (v^T J at every input element)" in res.stdout
    assert "10,000 x 10,000 = 100,000,000 elements, more than the 1,048,576" in res.stdout
    assert_clean(res)


def test_large_input_wrong_backward_fails_located(funcs):
    res = gradcheck(funcs, "funcs.py:SquareWrong", "-i", "x=100,100", "--json")
    assert res.returncode == 1, res.stdout + res.stderr
    (fn,) = json.loads(res.stdout)["functions"]
    (pair,) = fn["pairs"]
    assert pair["mode"] == "vjp" and not pair["ok"] and pair["n_elements"] == 10_000
    worst = pair["worst"][0]
    assert worst["where"].startswith("v^T y w.r.t. x[")
    assert worst["analytical"] / worst["numerical"] == pytest.approx(1.5, rel=1e-4)
    assert_clean(res)


def test_very_large_input_samples_input_elements_and_says_so(funcs):
    res = gradcheck(funcs, "funcs.py:Square", "-i", "x=200,200")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS  Jacobian matches finite differences (v^T J at sampled input elements)" in (
        res.stdout
    )
    assert "v^T J matches at 3,355 of 40,000 of x, drawn at random" in res.stdout
    assert "40,000 x 40,000 = 1,600,000,000 elements" in res.stdout
    assert_clean(res)
    res = gradcheck(funcs, "funcs.py:SquareWrong", "-i", "x=200,200")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAIL  Jacobian matches finite differences (v^T J at sampled input elements)" in (
        res.stdout
    )
    assert_clean(res)


@pytest.mark.parametrize(
    "target, words",
    [
        ("ExitInBackward", "backward called sys.exit(0)"),
        ("ExitWithTextInBackward", "backward called sys.exit('bye')"),
        ("ExitInForward", "forward called sys.exit(0)"),
    ],
)
def test_sys_exit_in_user_code_is_a_failed_check(funcs, target, words):
    res = gradcheck(funcs, f"funcs.py:{target}", "-i", "x=3")
    assert res.returncode == 1, res.stdout + res.stderr
    assert words in res.stdout and "gradcheck FAILED" in res.stdout
    assert "all checks passed" not in res.stdout
    assert_clean(res)


def test_sys_exit_in_backward_fails_in_json_too(funcs):
    res = gradcheck(funcs, "funcs.py:ExitInBackward", "-i", "x=3", "--json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    detail = doc["functions"][0]["checks"][0]["detail"]
    assert doc["ok"] is False and detail == "backward called sys.exit(0)"


EXITING_MODULES = {
    "exit_on_import.py": "import sys\nsys.exit(0)\n",
    "exit_in_example.py": (
        "import sys\n"
        "from autogradcli.autograd import Function\n"
        "class F(Function):\n"
        "    @staticmethod\n"
        "    def example_inputs():\n"
        "        sys.exit(0)\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g * 2\n"
    ),
    "exit_layer.py": (
        "import sys\n"
        "from autogradcli.autograd import Function\n"
        "class F(Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, weight, bias):\n"
        "        sys.exit(0)\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g, None, None\n"
    ),
    "exit.yaml": (
        "data: {dataset: sine, n: 32, val_split: 0.25}\n"
        "model:\n"
        "  - {type: exit_layer.py:F, params: {weight: [4, auto], bias: [4]}}\n"
        "  - {type: Linear, in_features: auto, out_features: 1}\n"
        "loss: mse\n"
    ),
}


@pytest.mark.parametrize(
    "argv, code, words",
    [
        (["exit_on_import.py:F"], 2, "it called sys.exit(0) while being imported"),
        (["exit_in_example.py:F"], 1, "F.example_inputs() called sys.exit(0)"),
        (["exit.yaml"], 1, "exit.yaml: the model's code called sys.exit(0)"),
    ],
)
def test_sys_exit_outside_forward_and_backward_is_not_a_pass(tmp_path, argv, code, words):
    for name, text in EXITING_MODULES.items():
        (tmp_path / name).write_text(text)
    res = gradcheck(tmp_path, *argv)
    assert res.returncode == code, res.stdout + res.stderr
    assert words in res.stderr
    assert_clean(res)
