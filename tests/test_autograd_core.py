"""The core (tensor + autograd) on its own, and the Function mechanism's entry points."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.autograd import Function

_CORE_ONLY = textwrap.dedent(
    """
    import importlib.abc, os, sys, types

    class Block(importlib.abc.MetaPathFinder):
        # every layer above tensor + autograd is refused
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[:2] in (["autogradcli", layer] for layer in BLOCKED):
                raise ImportError(f"blocked: {name}")
            return None

    BLOCKED = ["ops", "nn", "optim", "data", "serialization", "config", "trainer", "cli"]
    sys.meta_path.insert(0, Block())
    # the package without its __init__ (which imports every layer)
    pkg = types.ModuleType("autogradcli")
    pkg.__path__ = [os.path.join(sys.argv[1], "autogradcli")]
    sys.modules["autogradcli"] = pkg

    import numpy as np
    from autogradcli.autograd import Function, grad
    from autogradcli.tensor.tensor import Tensor, wrap

    class Scale(Function):  # y = x * c, c broadcast against x
        @staticmethod
        def forward(ctx, x, c):
            ctx.save_for_backward(x, c)
            return x._data * c._data

        @staticmethod
        def backward(ctx, g):
            x, c = ctx.saved_tensors
            # the gradient for c is returned unreduced: the engine sums it to c's shape
            return Scale.apply(g, c), Scale.apply(g, x)

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x._data * x._data

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return Scale.apply(Scale.apply(g, x), wrap(np.array(2.0)))

    x = wrap(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    c = wrap(np.array([0.5]), requires_grad=True)
    y = Scale.apply(Square.apply(x), c)  # c * x**2, x used twice below
    z = Scale.apply(y, wrap(np.ones(1)))
    root = Square.apply(z)
    root.backward(wrap(np.ones(3)), create_graph=True)
    # d/dx (c x^2)^2 = 4 c^2 x^3 ; d/dc = 2 c x^4 summed
    assert np.allclose(x.grad._data, 4 * 0.25 * np.array([1.0, 8.0, 27.0])), x.grad._data
    assert np.allclose(c.grad._data, [2 * 0.5 * (1 + 16 + 81)]), c.grad._data
    (gx,) = grad(x.grad, x, wrap(np.ones(3)))  # second order, through the recorded backward
    assert np.allclose(gx._data, 12 * 0.25 * np.array([1.0, 4.0, 9.0])), gx._data
    assert not any(m.startswith("autogradcli.ops") for m in sys.modules)
    print("ok")
    """
)


def test_core_runs_without_the_ops_layer():
    root = os.path.dirname(os.path.dirname(os.path.abspath(ag.__file__)))
    proc = subprocess.run(
        [sys.executable, "-c", _CORE_ONLY, root], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


class _OldSquare(Function):
    """The older, instance style: forward(self, ...) called as _OldSquare()(x)."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, g):
        (x,) = self.saved_tensors
        return 2 * x * g


class _StaticSquare(_OldSquare):
    """A static-style subclass of an older-style Function."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * g  # not the parent's rule: shows which backward ran


def test_static_subclass_of_an_older_style_function_applies():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = _StaticSquare.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [1.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 6.0])
    assert type(y.grad_fn).__name__ == "_StaticSquareBackward"


def test_older_style_function_is_called_not_applied():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    _OldSquare()(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    with pytest.raises(RuntimeError, match=r"call it as _OldSquare\(\)\(\.\.\.\)"):
        _OldSquare.apply(x)
    # PyTorch 0.x style on a static-method Function runs as apply, with PyTorch's warning
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        y = _StaticSquare()(x)
    np.testing.assert_allclose(y.detach().numpy(), [1.0, 4.0])


def test_entry_points_record_the_same_graph():
    """Function.apply (any arity), the one- and two-argument entry points and the older style
    give the same grad_fn wiring: edges to the inputs' nodes, outputs numbered."""
    a = ag.tensor([1.0, 2.0], requires_grad=True)
    b = ag.tensor([3.0, 4.0], requires_grad=True)
    s = a * b  # two-argument entry point
    e = s.exp()  # one-argument entry point
    m = ag.maximum(e, a)  # Function.apply
    assert (
        s.grad_fn.next_functions[0][0] is a.grad_fn or s.grad_fn.next_functions[0][0].variable is a
    )
    assert e.grad_fn.next_functions == ((s.grad_fn, 0),)
    assert m.grad_fn.next_functions[0] == (e.grad_fn, 0)
    assert m.grad_fn.next_functions[1][0].variable is a
    assert m.grad_fn.needs_input_grad == (True, True)
    assert s.grad_fn.needs_input_grad == (True, True)
    c = ag.tensor([1.0, 1.0])
    assert (a * c).grad_fn.needs_input_grad == (True, False)
    assert (c * a).grad_fn.needs_input_grad == (False, True)
