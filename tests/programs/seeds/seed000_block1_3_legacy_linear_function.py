# fmt: off
# ruff: noqa
"""Seed 000, blocks 1-3: the instance-style ``Linear`` Function, its ``linear`` helper and gradcheck.

Source: shared/seeds/000_b4b9c5ce478ba137.txt (a Chinese translation of PyTorch 0.3's "Extending
PyTorch" note, "PyTorch:扩展PyTorch", AI教程网), first three code blocks, in page order.

Changes made in the port:
- imports: the page's blocks use ``torch``, ``Function``, ``Variable`` and ``gradcheck`` without
  importing them (the page starts mid-note); the imports below are the note's own, renamed to
  autogradcli.
- REPAIRED (lines lost in the page): ``output =`` and ``grad_input =`` lost their right-hand sides;
  restored as in the note's later version (seed 003): ``input.mm(weight.t())`` and
  ``grad_output.mm(weight)``.
- REPAIRED (broken on any engine): the page's gradcheck passes one tensor to a Function that needs
  ``input`` and ``weight``; a weight tensor is added as in seed 003. ``gradcheck.gradcheck`` was the
  0.3-era module path; ``torch.autograd.gradcheck`` is the function itself in every release since
  0.4, so the call is ``gradcheck(...)``.
- Outcome checks (added at the end): gradcheck returns True; the helper's output and gradients
  equal a hand-written matrix product's.

PyTorch 2.x refuses instance-style Functions ("Legacy autograd function with non-static forward
method is deprecated"): this file runs on autogradcli only.
"""

import autogradcli as torch
from autogradcli.autograd import Function, Variable, gradcheck


# Inherit from Function
class Linear(Function):

    # bias is an optional argument
    def forward(self, input, weight, bias=None):
        self.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())  # REPAIRED: right-hand side lost in the page
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    # This function has only a single output, so it gets only one gradient
    def backward(self, grad_output):
        # This is a pattern that is very convenient - at the top of backward
        # unpack saved_tensors and initialize all gradients w.r.t. inputs to
        # None. Thanks to the fact that additional trailing Nones are
        # ignored, the return statement is simple even when the function has
        # optional inputs.
        input, weight, bias = self.saved_tensors
        grad_input = grad_weight = grad_bias = None

        # These needs_input_grad checks are optional and there only to
        # improve efficiency. If you want to make your code simpler, you can
        # skip them. Returning gradients for inputs that don't require it is
        # not an error.
        if self.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)  # REPAIRED: right-hand side lost in the page
        if self.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and self.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)

        return grad_input, grad_weight, grad_bias


def linear(input, weight, bias=None):
    # First braces create a Function object. Any arguments given here
    # will be passed to __init__. Second braces will invoke the __call__
    # operator, that will then use forward() to compute the result and
    # return it.
    return Linear()(input, weight, bias)


# gradchek takes a tuple of tensor as input, check if your gradient
# evaluated with these tensors are close enough to numerical
# approximations and returns True if they all verify this condition.
input = (
    Variable(torch.randn(20, 20).double(), requires_grad=True),
    Variable(torch.randn(30, 20).double(), requires_grad=True),  # REPAIRED: the weight was missing
)
test = gradcheck(Linear(), input, eps=1e-6, atol=1e-4)  # REPAIRED: was gradcheck.gradcheck(...)

# ---- outcome checks (not in the page) ----
print(test)
assert test is True
x = Variable(torch.randn(4, 3), requires_grad=True)
w = Variable(torch.randn(5, 3), requires_grad=True)
b = Variable(torch.randn(5), requires_grad=True)
out = linear(x, w, b)
expected = x.detach().mm(w.detach().t()) + b.detach()
assert torch.allclose(out, expected), (out, expected)
out.sum().backward()
assert torch.allclose(x.grad, w.detach().sum(0).expand(4, 3))
assert torch.allclose(w.grad, x.detach().sum(0).expand(5, 3))
assert torch.allclose(b.grad, torch.full((5,), 4.0))
