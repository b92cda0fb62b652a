"""Custom autograd Functions: the ctx API, several outputs, gradient checks and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.autograd import Function, gradcheck, once_differentiable


def _x(*shape, seed=0):
    return ag.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def _fn(forward, backward, name="Custom"):
    return type(
        name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    )


def test_needs_input_grad():
    seen = []

    def fwd(ctx, a, k, b):
        seen.append(ctx.needs_input_grad)
        return a * k + b

    def bwd(ctx, g):
        return g * 2.0, None, g

    F = _fn(fwd, bwd)
    F.apply(_x(2), 2.0, ag.ones(2, dtype=ag.float64))
    F.apply(ag.ones(2), 2.0, ag.ones(2))
    assert seen == [(True, False, False), (False, False, False)]
    with ag.no_grad():
        F.apply(_x(2), 2.0, _x(2))
    assert seen[-1] == (False, False, False)


def test_mark_dirty():
    class AddOne_(Function):
        @staticmethod
        def forward(ctx, x):
            x._data += 1.0
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = _x(3)
    b = a * 2.0
    v = b._version
    out = AddOne_.apply(b)
    assert out is b and b._version == v + 1 and b.grad_fn.name() == "AddOne_Backward"
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 2.0))
    with pytest.raises(
        RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"
    ):
        AddOne_.apply(_x(3))


def test_mark_non_differentiable():
    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = ag.tensor(np.argsort(x._data))
            flag = ag.tensor(x._data > 0).to(ag.float64)
            ctx.mark_non_differentiable(idx, flag)
            return x * 2.0, idx, flag

        @staticmethod
        def backward(ctx, g, g_idx, g_flag):
            assert g_flag is None or float(g_flag.abs().sum()) == 0.0
            return g * 2.0

    x = _x(3)
    y, idx, flag = SortLike.apply(x)
    assert y.requires_grad and not idx.requires_grad and not flag.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))


def test_set_materialize_grads_false_passes_none():
    got = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1.0, x * 2.0

        @staticmethod
        def backward(ctx, g1, g2):
            got.append((g1 is None, g2 is None))
            g = ag.zeros_like(g1 if g1 is not None else g2)
            return g + (g1 if g1 is not None else 0.0) + (2.0 * g2 if g2 is not None else 0.0)

    x = _x(2)
    a, b = Two.apply(x)
    b.sum().backward()
    assert got == [(True, False)]

    class TwoMat(Two):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0, x * 2.0

    a, b = TwoMat.apply(x)
    a.sum().backward()
    assert got[-1] == (False, False)  # materialized: zeros instead of None


def test_once_differentiable():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2.0 * g * x

    x = _x(3)
    assert gradcheck(Sq.apply, (x,))
    (g,) = ag.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad  # as torch: the incoming grad (ones) does not require grad
    (g,) = ag.autograd.grad(Sq.apply(x).pow(2).sum(), x, create_graph=True)
    assert g.requires_grad
    with pytest.raises(
        RuntimeError,
        match="trying to differentiate twice a function that was marked with @once_differentiable",
    ):
        g.sum().backward()


def test_several_outputs_and_trailing_none():
    class SinCos(Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x.sin() * scale, x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            return gs * x.cos() * ctx.scale - gc * x.sin(), None, None, None  # extra Nones

    x = _x(4)
    assert gradcheck(SinCos.apply, (x, 3.0))
    s, c = SinCos.apply(x, 3.0)
    assert s.grad_fn is c.grad_fn and (s.output_nr, c.output_nr) == (0, 1)
    (s.sum() + c.sum()).backward()
    xn = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * np.cos(xn) - np.sin(xn))


def test_wrong_number_of_gradients():
    F = _fn(lambda ctx, a, b: a * b, lambda ctx, g: g, name="TooFew")
    with pytest.raises(
        RuntimeError,
        match=r"function TooFewBackward returned an incorrect number of gradients \(expected 2, got 1\)",
    ):
        F.apply(_x(2), _x(2)).sum().backward()
    G = _fn(lambda ctx, a: a * 2.0, lambda ctx, g: (g, g), name="TooMany")
    with pytest.raises(
        RuntimeError,
        match=r"TooManyBackward returned an incorrect number of gradients \(expected 1, got 2\)",
    ):
        G.apply(_x(2)).sum().backward()


def test_wrong_gradient_shape_names_function_index_and_shapes():
    F = _fn(lambda ctx, a, b: a * b, lambda ctx, g: (g, g.reshape(6)[:4]), name="BadShape")
    with pytest.raises(RuntimeError, match=r"BadShapeBackward.*\(4,\).*input 1.*\(2, 3\)"):
        F.apply(_x(2, 3), _x(2, 3)).sum().backward()
    H = _fn(lambda ctx, a: a * 2.0, lambda ctx, g: 3, name="NotTensor")
    # torch: RuntimeError "expected Variable or None (got int)"
    with pytest.raises((TypeError, RuntimeError), match=r"NotTensorBackward.*int.*input 0"):
        H.apply(_x(2)).sum().backward()


def test_broadcast_compatible_grads_are_summed():
    F = _fn(lambda ctx, x, b: x + b, lambda ctx, g: (g, g), name="AddBias")
    x, b = _x(4, 3), _x(3, seed=1)
    F.apply(x, b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, 4.0))
    assert gradcheck(F.apply, (x, b))
    c = _x(1, 3, seed=2)
    F.apply(x, c).sum().backward()
    assert c.grad.shape == (1, 3)
    np.testing.assert_allclose(c.grad.numpy(), np.full((1, 3), 4.0))


def test_float32_through_custom_function():
    F = _fn(lambda ctx, x, w: x * w, lambda ctx, g: (g * 2.0, g.sum(0) * 1.0), name="F32")
    x = ag.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    w = ag.tensor(np.ones(3, np.float32), requires_grad=True)
    out = F.apply(x, w)
    out.sum().backward()
    assert out.dtype == x.grad.dtype == w.grad.dtype == ag.float32


def test_apply_with_kwargs():
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k=2.0, *, shift=None):
            seen.append(ctx.needs_input_grad)
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 3.0, None, None

    class Scale2(Function):
        @staticmethod
        def forward(ctx, x, k=2.0):
            seen.append(ctx.needs_input_grad)
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = _x(2)
    Scale2.apply(x, k=3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    assert seen[-1] == (True, False)
    Scale2.apply(x=x).sum()
    assert seen[-1] == (True, False)  # defaults bound when keywords are used, as torch
    with pytest.raises(TypeError, match="keyword-only"):
        Scale.apply(x, shift=1.0)


def test_grad_fn_name_and_next_functions():
    F = _fn(lambda ctx, a, k, b: a * k + b, lambda ctx, g: (g, None, g), name="Lin")
    a, b = _x(2), _x(2, seed=1)
    h = a * 2.0
    y = F.apply(h, 3.0, b)
    assert y.grad_fn.name() == "LinBackward" and type(y.grad_fn).__name__ == "LinBackward"
    (f0, n0), (f1, n1), (f2, n2) = y.grad_fn.next_functions
    assert f0 is h.grad_fn and f1 is None and f2.name() == "AccumulateGrad" and f2.variable is b
    assert (n0, n1, n2) == (0, 0, 0)
    # issue 9: an instance call of a static-forward Function (seed 001) runs as .apply and warns
    # with PyTorch's instantiation DeprecationWarning (PyTorch 2 then refuses the call)
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        z = F()(h, 3.0, b)
    assert type(z.grad_fn).__name__ == "LinBackward" and ag.equal(z, y)


def test_saved_tensor_modified_in_place_is_detected():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    x = _x(3)
    y = Exp.apply(x)
    with ag.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_setup_context_style_linear_function_matches_torch_and_gradchecks():
    """PyTorch 2's style: forward without ctx, state saved in setup_context."""
    torch = pytest.importorskip("torch")

    def make(lib):
        class LinearFunction(lib.autograd.Function):
            @staticmethod
            def forward(input, weight, bias):
                return input.mm(weight.t()) + bias

            @staticmethod
            def setup_context(ctx, inputs, output):
                input, weight, _bias = inputs
                ctx.save_for_backward(input, weight)

            @staticmethod
            def backward(ctx, grad_output):
                input, weight = ctx.saved_tensors
                return grad_output.mm(weight), grad_output.t().mm(input), grad_output.sum(0)

        return LinearFunction

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((4, 3), (5, 3), (5,))]
    ours = [ag.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    make(ag).apply(*ours).sum().backward()
    make(torch).apply(*theirs).sum().backward()
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy())
    assert ag.autograd.gradcheck(make(ag).apply, tuple(ours))


def test_mark_non_differentiable_on_an_input_returned_as_is():
    class PassThrough(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = ag.ones(3, requires_grad=True)
    y = PassThrough.apply(x)
    assert not y.requires_grad and y.grad_fn is None


def test_unused_input_message_names_its_index():
    x = ag.ones(2, requires_grad=True)
    y = ag.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not"):
        ag.autograd.grad((x * 2).sum(), [x, y])
