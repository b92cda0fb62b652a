# fmt: off
# ruff: noqa
"""Seed 001, block 3: a ``Linear`` nn.Module calling ``LinearFunction.apply``.

Source: shared/seeds/001_ab43ad7be7a57c4c.txt ("Pytorch使用autograd.Function自定义拓展神经网络",
CSDN), the Module block; ``LinearFunction`` is the page's block 2, repeated here verbatim.

Changes made in the port:
- imports renamed to autogradcli (REPAIRED: ``import torch.autograd.Function as Function`` fails on
  every engine; it is ``from ... import Function``).
- Outcome checks (added): the module's output is ``x @ W.T + b``, gradients reach both parameters,
  and the page's other spelling, ``LinearFunction()(...)`` (the commented-out line), gives the same
  output on autogradcli (PyTorch 2.x refuses it, so that check runs only when the module is not
  PyTorch).
"""

import autogradcli as torch
import autogradcli.nn as nn
from autogradcli.autograd import Function  # REPAIRED: was `import torch.autograd.Function as Function`


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        print(type(input))
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_variables
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)

        return grad_input, grad_weight, grad_bias


import autogradcli.nn as nn
class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super(Linear, self).__init__()
        self.input_features = input_features
        self.output_features = output_features
        # nn.Parameter is a special kind of Variable, that will get
        # automatically registered as Module's parameter once it's assigned
        # 这个很重要! Parameters是默认需要梯度的!
        self.weight = nn.Parameter(torch.Tensor(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(output_features))
        else:
            # You should always register all possible parameters, but the
            # optional ones can be None if you want.
            self.register_parameter('bias', None)
        # Not a very smart way to initialize weights
        self.weight.data.uniform_(-0.1, 0.1)
        if bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)
    def forward(self, input):
        # See the autograd section for explanation of what happens here.
        return LinearFunction.apply(input, self.weight, self.bias)
        # 或者 return LinearFunction()(input, self.weight, self.bias)


# ---- outcome checks (not in the page) ----
import warnings

torch.manual_seed(0)
m = Linear(3, 2)
assert float(m.weight.abs().max()) <= 0.1 and float(m.bias.abs().max()) <= 0.1
x = torch.randn(4, 3)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # ctx.saved_variables warns
    y = m(x)
    y.sum().backward()
assert torch.allclose(y, x.mm(m.weight.detach().t()) + m.bias.detach())
assert torch.allclose(m.weight.grad, x.sum(0).expand(2, 3))
assert torch.allclose(m.bias.grad, torch.full((2,), 4.0))
if torch.__name__ != "torch":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        y2 = LinearFunction()(x, m.weight, m.bias)
    assert torch.equal(y2, y)
