# fmt: off
# ruff: noqa
"""Seed 003, all code blocks: PyTorch 1.1's "Extending PyTorch" note (LinearFunction, apply alias,
MulConstant, gradcheck, a Linear Module with ``extra_repr``).

Source: shared/seeds/003_e115c4f6e8aa17d1.txt (docs/notes/extending.html of PyTorch 1.1, saved from
a GitHub fork of pytorch/pytorch.github.io), its five code blocks in page order.

Changes made in the port:
- imports: the note's blocks use ``torch``, ``nn`` and ``Function`` without importing them; the
  usual ``import torch``, ``import torch.nn as nn``, ``from torch.autograd import Function`` are
  added, renamed to autogradcli.
- REPAIRED (broken on every engine): ``extra_repr`` formats ``self.in_features`` and
  ``self.out_features``, but ``__init__`` stores ``input_features`` and ``output_features``;
  printing the module (which the note's comment invites) raised AttributeError. ``extra_repr``
  reads the attributes ``__init__`` sets. ``if bias is not None:`` before initialising the bias tests
  the constructor's boolean (never None), so ``Linear(..., bias=False)`` crashed on ``None.data``;
  it is ``if bias:``.
- Outcome checks (added): gradcheck prints True (as the note says it returns), MulConstant's
  gradient is the constant, the module prints its ``extra_repr`` and computes ``x @ W.T + b``.
"""

import autogradcli as torch
import autogradcli.nn as nn
from autogradcli.autograd import Function


# Inherit from Function
class LinearFunction(Function):

    # Note that both forward and backward are @staticmethods
    @staticmethod
    # bias is an optional argument
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    # This function has only a single output, so it gets only one gradient
    @staticmethod
    def backward(ctx, grad_output):
        # This is a pattern that is very convenient - at the top of backward
        # unpack saved_tensors and initialize all gradients w.r.t. inputs to
        # None. Thanks to the fact that additional trailing Nones are
        # ignored, the return statement is simple even when the function has
        # optional inputs.
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None

        # These needs_input_grad checks are optional and there only to
        # improve efficiency. If you want to make your code simpler, you can
        # skip them. Returning gradients for inputs that don't require it is
        # not an error.
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)

        return grad_input, grad_weight, grad_bias


linear = LinearFunction.apply


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx is a context object that can be used to stash information
        # for backward computation
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # We return as many input gradients as there were arguments.
        # Gradients of non-Tensor arguments to forward must be None.
        return grad_output * ctx.constant, None


from autogradcli.autograd import gradcheck

# gradcheck takes a tuple of tensors as input, check if your gradient
# evaluated with these tensors are close enough to numerical
# approximations and returns True if they all verify this condition.
input = (torch.randn(20,20,dtype=torch.double,requires_grad=True), torch.randn(30,20,dtype=torch.double,requires_grad=True))
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print(test)


class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super(Linear, self).__init__()
        self.input_features = input_features
        self.output_features = output_features

        # nn.Parameter is a special kind of Tensor, that will get
        # automatically registered as Module's parameter once it's assigned
        # as an attribute. Parameters and buffers need to be registered, or
        # they won't appear in .parameters() (doesn't apply to buffers), and
        # won't be converted when e.g. .cuda() is called. You can use
        # .register_buffer() to register buffers.
        # nn.Parameters require gradients by default.
        self.weight = nn.Parameter(torch.Tensor(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(output_features))
        else:
            # You should always register all possible parameters, but the
            # optional ones can be None if you want.
            self.register_parameter('bias', None)

        # Not a very smart way to initialize weights
        self.weight.data.uniform_(-0.1, 0.1)
        if bias:  # REPAIRED: was `if bias is not None:`, true for bias=False too
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        # See the autograd section for explanation of what happens here.
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        # (Optional)Set the extra information about this module. You can test
        # it by printing an object of this class.
        return 'in_features={}, out_features={}, bias={}'.format(
            self.input_features, self.output_features, self.bias is not None  # REPAIRED: was self.in_features, self.out_features
        )


# ---- outcome checks (not in the page) ----
assert test is True
x = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
y = MulConstant.apply(x, 2.5)
y.sum().backward()
assert torch.allclose(y, x.detach() * 2.5) and torch.allclose(x.grad, torch.full_like(x, 2.5))
assert gradcheck(lambda t: MulConstant.apply(t, 2.5), (x,))
torch.manual_seed(0)
m = Linear(4, 3)
print(m)
assert str(m) == "Linear(in_features=4, out_features=3, bias=True)", str(m)
assert str(Linear(2, 2, bias=False)) == "Linear(in_features=2, out_features=2, bias=False)"
inp = torch.randn(5, 4)
out = m(inp)
assert torch.allclose(out, inp.mm(m.weight.detach().t()) + m.bias.detach())
out.pow(2).sum().backward()
assert m.weight.grad.shape == (3, 4) and m.bias.grad.shape == (3,)
