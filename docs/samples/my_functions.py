"""The custom Functions of the README's `agrad gradcheck` examples."""

import autogradcli as ag
from autogradcli.autograd import Function


class AddBias(Function):
    """x + b, b broadcast over the rows; backward forgets to sum b's gradient over them."""

    @staticmethod
    def forward(ctx, x, b):
        return x + b

    @staticmethod
    def backward(ctx, g):
        return g, g[0]  # should be g.sum(0)


class Relu(Function):
    """max(x, 0), checked on inputs that include its kink at 0."""

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
