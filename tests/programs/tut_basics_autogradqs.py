"""Learn the Basics - Automatic Differentiation with torch.autograd, from the PyTorch tutorials.

Source: https://github.com/pytorch/tutorials/blob/1532c0de875b79f541371438d8d1d08be18f87de/beginner_source/basics/autogradqs_tutorial.py
Licence: BSD-3-Clause (Copyright (c) 2017-2022, Pytorch contributors).

Changes in the port:
- imports: torch -> autogradcli; the tutorial's prose comments are dropped.
- torch.manual_seed(0) added; outcome: asserts what the page states or shows: w.grad and b.grad
  are the gradient of the binary cross-entropy ((sigmoid(z) - y) / 3, spread over x), the
  requires_grad flags printed are True, False, False, and the Jacobian-product calls give
  2 * (inp + 1), then twice that (accumulated), then 2 * (inp + 1) again after zero_().
"""

import autogradcli as torch

torch.manual_seed(0)

x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")

loss.backward()
print(w.grad)
print(b.grad)
expected_b = (torch.sigmoid(z) - y).detach() / 3
assert torch.allclose(b.grad, expected_b, atol=1e-6)
assert torch.allclose(w.grad, x.unsqueeze(1) * expected_b.unsqueeze(0), atol=1e-6)

z = torch.matmul(x, w)+b
print(z.requires_grad)
assert z.requires_grad

with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)
assert not z.requires_grad

z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)
assert not z_det.requires_grad

inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
first = inp.grad.clone()
assert torch.equal(first, 2 * (inp.detach() + 1))
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
assert torch.equal(inp.grad, 2 * first)
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
assert torch.equal(inp.grad, first)
