"""Shared helpers for the agrad CLI tests (no tests here): run in-process (exit code, stdout,
stderr) or as a real subprocess, and the small configs and Functions the tests use."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr, redirect_stdout

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def agrad(capsys, *argv: str) -> tuple[int, str, str]:
    """``agrad ARGV`` in this process, through the same error mapping as the console script."""
    from autogradcli.cli import main

    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def agrad_subprocess(*argv: str, cwd: str | None = None, timeout: float = 120):
    env = dict(os.environ, COLUMNS="120", PYTHONPATH=REPO)
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "autogradcli.cli", *argv],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env=env,
        timeout=timeout,
    )


def agrad_in_process(*argv: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    """``agrad_subprocess`` without the new interpreter (for tests of what a command does, not of
    the process): ``main(argv)`` in ``cwd`` (default: the repository) with the same environment
    changes, its stdout and stderr captured; a result with the same fields."""
    from autogradcli.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in ("COLUMNS", "FORCE_COLOR")}
    os.environ["COLUMNS"] = "120"
    os.environ.pop("FORCE_COLOR", None)
    try:
        with contextlib.chdir(cwd or REPO), redirect_stdout(out), redirect_stderr(err):
            code = main(list(argv))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return subprocess.CompletedProcess(["agrad", *argv], code, out.getvalue(), err.getvalue())


def write(path, text: str) -> str:
    path.write_text(textwrap.dedent(text).lstrip())
    return str(path)


TINY_CONFIG = """
name: tiny
seed: 0
data:
  dataset: sine
  n: 64
  val_split: 0.25
model:
  - {type: Linear, in_features: auto, out_features: 8}
  - Tanh
  - {type: Linear, in_features: auto, out_features: 1}
loss: mse
optimizer: {type: SGD, lr: 0.05}
train: {epochs: 2, batch_size: 16}
"""

FUNCTION_CONFIG = """
name: fnlayer
seed: 0
data:
  dataset: sine
  n: 32
  val_split: 0.25
model:
  - type: funcs.py:{name}
    params: {{weight: [4, auto], bias: [4]}}
  - Tanh
  - {{type: Linear, in_features: auto, out_features: 1}}
loss: mse
train: {{epochs: 1, batch_size: 8}}
"""

FUNCS = '''
import autogradcli as ag
from autogradcli.autograd import Function


class Linear(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.t() + bias

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        return g @ weight, g.t() @ x, g.sum(0)


class LinearNoBiasSum(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.t() + bias

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        return g @ weight, g.t() @ x, g[0]


class AddBias(Function):
    """x + b with b broadcast over the rows; backward forgets to sum over them."""

    @staticmethod
    def forward(ctx, x, b):
        return x + b

    @staticmethod
    def backward(ctx, g):
        return g, g[0]


class MulSign(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return -g * w, g * x


class Square2(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 4 * g * x


class MatMulT(Function):
    """x @ w; backward returns the transpose of w's gradient."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t(), (x.t() @ g).t()


class MulMissing(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, None


class Mul(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, g * x


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.log()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / x


class Scale(Function):
    """alpha * x, a non-tensor argument after the tensor."""

    @staticmethod
    def forward(ctx, x, alpha=2.0):
        ctx.alpha = alpha
        return x * alpha

    @staticmethod
    def backward(ctx, g):
        return g * ctx.alpha, None


class Relu(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0).to(g.dtype)

    @staticmethod
    def example_inputs():
        return (ag.tensor([[-1.0, 0.0, 2.0], [0.0, 3.0, -2.0]]),)


class Cube(Function):
    """x ** 3, with example inputs as a class attribute; backward is differentiable."""

    example_inputs = (ag.tensor([0.5, -1.0, 2.0]),)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x


class CubeBadSecond(Function):
    """x ** 3 whose backward is right in value but built from a detached x: no second order."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * (x * x).detach()
'''
