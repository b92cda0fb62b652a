"""Deep Learning with PyTorch: A 60 Minute Blitz - Autograd: automatic differentiation.

Source: https://github.com/pytorch/tutorials/blob/05f04cb4463d507cc90f891db82d8c2685e14b53/beginner_source/blitz/autograd_tutorial.py
Licence: BSD-3-Clause (Copyright (c) 2017-2022, Pytorch contributors).

Changes in the port:
- imports: torch -> autogradcli; the tutorial's prose comments are dropped; the last block's tab
  indentation -> spaces.
- torch.manual_seed(0) added.
- outcome: asserts the values the page states: y = x + 2 is all 3, z = 27, out = 27, x.grad all
  4.5, requires_grad flips to True, b has a grad_fn, the doubled-until-large y's gradient is
  gradients * 2**k (a counter k of the doublings is added for this check), and no_grad turns
  tracking off.
"""

import autogradcli as torch

torch.manual_seed(0)

x = torch.ones(2, 2, requires_grad=True)
print(x)

y = x + 2
print(y)
assert (y == 3).all()

print(y.grad_fn)
assert y.grad_fn is not None

z = y * y * 3
out = z.mean()

print(z, out)
assert (z == 27).all() and out.item() == 27

a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)
assert a.requires_grad and b.grad_fn is not None

out.backward()

print(x.grad)
assert (x.grad == 4.5).all()

x = torch.randn(3, requires_grad=True)

y = x * 2
k = 1
while y.data.norm() < 1000:
    y = y * 2
    k += 1

print(y)

gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)

print(x.grad)
assert torch.allclose(x.grad, gradients * 2 ** k)

print(x.requires_grad)
print((x ** 2).requires_grad)

with torch.no_grad():
    print((x ** 2).requires_grad)
    assert not (x ** 2).requires_grad
