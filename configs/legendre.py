"""The "Extending PyTorch" tutorial's fit of sin(x) by ``a + b * P3(c + d * x)``.

``P3`` is the Legendre polynomial of degree 3 as a custom autograd Function with a hand-written
backward; ``LegendreModel`` is a user Module holding the four learnable scalars, used from
``legendre_sin.yaml`` as ``type: legendre.py:LegendreModel``.
"""

import autogradcli as torch
from autogradcli import nn


class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with P3'(x) = 1.5 (5x^2 - 1)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


class LegendreModel(nn.Module):
    """y = a + b * P3(c + d * x), starting from the tutorial's a=0, b=-1, c=0, d=0.3."""

    def __init__(self, a: float = 0.0, b: float = -1.0, c: float = 0.0, d: float = 0.3):
        super().__init__()
        self.a = nn.Parameter(torch.tensor(a))
        self.b = nn.Parameter(torch.tensor(b))
        self.c = nn.Parameter(torch.tensor(c))
        self.d = nn.Parameter(torch.tensor(d))

    def forward(self, x):
        return self.a + self.b * LegendrePolynomial3.apply(self.c + self.d * x)

    def extra_repr(self):
        return "y = a + b * P3(c + d * x)"
