"""PyTorch's "Extending PyTorch" and tutorial examples, ported by changing the import.

Each example is written once against a module ``torch`` (autogradcli or the real PyTorch) and run
on both from the same data; every custom Function also passes gradcheck (and gradgradcheck where
its backward is differentiable).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from lazy_torch import torch as real_torch

import autogradcli


def make_functions(torch):
    """The docs' Functions, verbatim but for the module they are built on."""
    Function = torch.autograd.Function

    class LinearFunction(Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    class MulConstant(Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    class MyReLU(Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    class MyExp(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    class LegendrePolynomial3(Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input**2 - 1)

    return LinearFunction, MulConstant, MyReLU, MyExp, LegendrePolynomial3


OURS = make_functions(autogradcli)
LinearFunction, MulConstant, MyReLU, MyExp, LegendrePolynomial3 = OURS
gradcheck = autogradcli.autograd.gradcheck
gradgradcheck = autogradcli.autograd.gradgradcheck


def _x(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return autogradcli.tensor(rng.standard_normal(shape), requires_grad=True)


def test_linear_function_gradcheck_and_needs_input_grad():
    x, w, b = _x(5, 3), _x(4, 3, seed=1), _x(4, seed=2)
    assert gradcheck(LinearFunction.apply, (x, w, b))
    assert gradcheck(LinearFunction.apply, (x, w))  # optional bias
    assert gradgradcheck(LinearFunction.apply, (x, w, b))
    seen = []

    class Spy(LinearFunction):
        @staticmethod
        def backward(ctx, grad_output):
            seen.append(ctx.needs_input_grad)
            return LinearFunction.backward(ctx, grad_output)

    x.grad = None
    frozen = w.detach()
    Spy.apply(x, frozen, b).sum().backward()
    assert seen == [(True, False, True)]
    assert frozen.grad is None and x.grad is not None and b.grad is not None
    Spy.apply(x, w).sum().backward()
    assert seen[-1] == (True, True)  # as torch: only the arguments passed (3 grads returned)


def test_mul_constant_non_tensor_gets_none():
    x = _x(3, 2)
    assert gradcheck(MulConstant.apply, (x, 5.5))
    assert gradgradcheck(MulConstant.apply, (x, 5.5))
    y = MulConstant.apply(x, 3.0)
    assert y.grad_fn.needs_input_grad == (True, False)
    (g,) = autogradcli.autograd.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), np.full((3, 2), 3.0))


def test_myrelu_and_myexp():
    x = _x(4, 3)
    assert gradcheck(MyReLU.apply, (x,))
    assert gradcheck(MyExp.apply, (x,))
    assert gradgradcheck(MyExp.apply, (x,))
    y = MyExp.apply(x)
    assert y.grad_fn.name() == "MyExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))


def test_legendre_gradchecks():
    x = _x(6)
    assert gradcheck(LegendrePolynomial3.apply, (x,))
    assert gradgradcheck(LegendrePolynomial3.apply, (x,))


def fit_sine(torch, P3cls, steps):
    """The "fit sin(x) with a + b * P3(c + d * x)" loop of the tutorial."""
    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    losses = []
    for _ in range(steps):
        P3 = P3cls.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return losses, [float(p.item()) for p in (a, b, c, d)], [p.dtype for p in (a, b, c, d)]


def test_legendre_fit_matches_torch():
    ours, coef, dtypes = fit_sine(autogradcli, LegendrePolynomial3, 150)
    theirs, coef_t, _ = fit_sine(real_torch, make_functions(real_torch)[4], 150)
    assert ours[-1] < ours[0] / 2
    assert all(dt == autogradcli.float32 for dt in dtypes)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    np.testing.assert_allclose(coef, coef_t, rtol=1e-4, atol=1e-6)


def two_layer_net(torch, relu_cls, x_np, y_np, w1_np, w2_np, steps):
    """The tutorial's two-layer net fitted with a custom ReLU and manual SGD."""
    x, y = torch.tensor(x_np), torch.tensor(y_np)
    w1 = torch.tensor(w1_np, requires_grad=True)
    w2 = torch.tensor(w2_np, requires_grad=True)
    learning_rate = 1e-6
    losses = []
    for _ in range(steps):
        relu = relu_cls.apply
        y_pred = relu(x.mm(w1)).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return losses, w1.detach().numpy().copy(), w2.grad.dtype


def test_two_layer_net_with_custom_relu_matches_torch():
    rng = np.random.default_rng(0)
    N, D_in, H, D_out = 64, 100, 50, 10
    data = [rng.standard_normal(s).astype(np.float32) for s in ((N, D_in), (N, D_out))]
    weights = [rng.standard_normal(s).astype(np.float32) for s in ((D_in, H), (H, D_out))]
    ours, w1, gdt = two_layer_net(autogradcli, MyReLU, *data, *weights, 30)
    theirs, w1_t, _ = two_layer_net(real_torch, make_functions(real_torch)[2], *data, *weights, 30)
    assert ours[-1] < ours[0] and gdt == autogradcli.float32
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    np.testing.assert_allclose(w1, w1_t, rtol=1e-4, atol=1e-5)


def test_old_style_instance_function_with_variable():
    from autogradcli.autograd import Variable

    class OldLinear(autogradcli.autograd.Function):
        def forward(self, input, weight, bias=None):
            self.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        def backward(self, grad_output):
            input, weight, bias = self.saved_variables
            assert self.saved_tensors[0] is not None
            grad_input = grad_output.mm(weight)
            grad_weight = grad_output.t().mm(input)
            grad_bias = grad_output.sum(0) if bias is not None else None
            return grad_input, grad_weight, grad_bias

    rng = np.random.default_rng(0)
    x = Variable(autogradcli.tensor(rng.standard_normal((5, 3))), requires_grad=True)
    w = Variable(autogradcli.tensor(rng.standard_normal((4, 3))), requires_grad=True)
    b = Variable(autogradcli.tensor(rng.standard_normal(4)), requires_grad=True)
    out = OldLinear()(x, w, b)
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.tile(x.detach().numpy().sum(0), (4, 1)))
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 5.0))
    assert gradcheck(lambda *a: OldLinear()(*a), (x, w, b))
    with pytest.raises(RuntimeError, match="OldLinear"):
        OldLinear.apply(x, w, b)


def test_setup_context_style():
    class Mul2(autogradcli.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2.0

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    x = _x(3)
    Mul2.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))
