# fmt: off
# ruff: noqa
"""Seed 002, blocks 3-4: a Variable, ``y = x + 2``, ``y.backward()``, and the gradient the page prints.

Source: shared/seeds/002_85e5c199ee7f14da.txt (Chinese tutorial on PyTorch's main concepts), the
Variable block and the output block after it.

Changes made in the port:
- imports renamed to autogradcli.
- REPAIRED (broken on every engine): Python 2 ``print`` statements -> ``print(...)``. The block
  makes ``x`` 2x2 and calls ``y.backward()`` with no gradient, which every engine refuses for a
  non-scalar ("grad can be implicitly created only for scalar outputs"); the page's own output
  ("after backward: Variable containing: 1 [torch.FloatTensor of size 1x1]") shows that the run
  used a 1x1 ``x``, so ``torch.ones(2, 2)`` -> ``torch.ones(1, 1)``.
- Outcome checks (added): the gradient is the page's ``1`` in a 1x1 float tensor, and the printed
  ``grad_fn`` is an ``AddBackward0``.
"""

import autogradcli as torch
from autogradcli.autograd import Variable
x = Variable(torch.ones(1, 1), requires_grad=True)  # REPAIRED: was torch.ones(2, 2); see header
y = x + 2
print(y.grad_fn)
print("before backward: ", x.grad)
y.backward()
print("after backward: ", x.grad)

# ---- outcome checks (not in the page) ----
assert type(y.grad_fn).__name__ == "AddBackward0"
assert str(y.grad_fn).startswith("<AddBackward0 object at 0x")
assert x.grad.type() == "torch.FloatTensor" and x.grad.size() == (1, 1)
assert x.grad.tolist() == [[1.0]]
assert str(x.grad) == "tensor([[1.]])"
