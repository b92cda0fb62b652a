# fmt: off
# ruff: noqa
"""Seed 000, block 4: a ``Linear`` nn.Module built on the instance-style ``Linear`` Function.

Source: shared/seeds/000_b4b9c5ce478ba137.txt (a Chinese translation of PyTorch 0.3's "Extending
PyTorch" note, AI教程网), last code block; the Function is blocks 1-2 of the same page.

Changes made in the port:
- imports renamed to autogradcli; the page's Function (block 1, with its two lost right-hand sides
  restored as in seed 003) is repeated here because the Module below takes its name.
- REPAIRED (lines lost in the page): ``super(Linear, self).__init__()`` (without it no engine can
  assign a Parameter), the ``else:`` before ``register_parameter('bias', None)`` (without it the bias
  just created is dropped), and the starts of the two init lines, ``self.weight.data.uniform_(-0.1``
  and ``self.bias.data.uniform_(-0.1``, of which the page kept only ``, 0.1)``.
- REPAIRED (broken on any engine): the weight was ``(input_features, output_features)`` while the
  Function computes ``input.mm(weight.t())``; it is ``(output_features, input_features)`` as in the
  note's later version (seed 003). The page names both the Function and the Module ``Linear``, so
  ``Linear()`` inside ``forward`` would build the Module; the Function is kept under the alias
  ``LinearFunction`` and ``forward`` calls that.
- Outcome checks (added): the module's output equals ``x @ W.T + b`` and its parameters get
  gradients.

Instance-style Functions are refused by PyTorch 2.x: this file runs on autogradcli only.
"""

import autogradcli as torch
import autogradcli.nn as nn
from autogradcli.autograd import Function


class Linear(Function):
    def forward(self, input, weight, bias=None):
        self.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())  # REPAIRED: right-hand side lost in the page
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    def backward(self, grad_output):
        input, weight, bias = self.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if self.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)  # REPAIRED: right-hand side lost in the page
        if self.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and self.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)
        return grad_input, grad_weight, grad_bias


LinearFunction = Linear  # REPAIRED: the Module below shadows the Function's name


class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super(Linear, self).__init__()  # REPAIRED: line lost in the page
        self.input_features = input_features
        self.output_features = output_features

        # nn.Parameter is a special kind of Variable, that will get
        # automatically registered as Module's parameter once it's assigned
        # as an attribute. Parameters and buffers need to be registered, or
        # they won't appear in .parameters() (doesn't apply to buffers), and
        # won't be converted when e.g. .cuda() is called. You can use
        # .register_buffer() to register buffers.
        # nn.Parameters can never be volatile and, different than Variables,
        # they require gradients by default.
        # REPAIRED: (output_features, input_features), as forward multiplies by weight.t()
        self.weight = nn.Parameter(torch.Tensor(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(output_features))
        else:  # REPAIRED: line lost in the page
            # You should always register all possible parameters, but the
            # optional ones can be None if you want.
            self.register_parameter('bias', None)

        # Not a very smart way to initialize weights
        self.weight.data.uniform_(-0.1, 0.1)  # REPAIRED: start of the line lost in the page
        if bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)  # REPAIRED: start of the line lost in the page

    def forward(self, input):
        # See the autograd section for explanation of what happens here.
        return LinearFunction()(input, self.weight, self.bias)  # REPAIRED: was Linear()(...)


# ---- outcome checks (not in the page) ----
torch.manual_seed(0)
m = Linear(3, 2)
assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
assert float(m.weight.abs().max()) <= 0.1 and float(m.bias.abs().max()) <= 0.1
x = torch.randn(4, 3)
y = m(x)
assert y.shape == (4, 2)
assert torch.allclose(y, x.mm(m.weight.detach().t()) + m.bias.detach())
y.sum().backward()
assert torch.allclose(m.weight.grad, x.sum(0).expand(2, 3))
assert torch.allclose(m.bias.grad, torch.full((2,), 4.0))
print(m)
