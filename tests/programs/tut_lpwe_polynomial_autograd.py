"""PyTorch: Tensors and autograd, ported from the PyTorch tutorials ("Learning PyTorch with Examples").

Source: https://github.com/pytorch/tutorials/blob/02e5a75dc17eec70591fbfc71b6e53b390083c3a/beginner_source/examples_autograd/polynomial_autograd.py
Licence: BSD-3-Clause (Copyright (c) 2017-2022, Pytorch contributors).

Changes in the port:
- imports: torch -> autogradcli; the tutorial's long prose comments are shortened.
- repaired: the page's `a.grad, b.grad, c.grad, d.grad = 0., 0., 0., 0.` raises TypeError on
  PyTorch 2.13 ("assigned grad expected to be a Tensor or None"); the page's own commented-out
  `a.grad = None` lines are used instead.
- torch.manual_seed(0) added; outcome: asserts the final loss is below 50 (the page prints about 9).
"""
import autogradcli as torch
import math

torch.manual_seed(0)

# We want to be able to train our model on an accelerator such as CUDA, MPS, MTIA, or XPU.
# If the current accelerator is available, we will use it. Otherwise, we use the CPU.

dtype = torch.float
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
torch.set_default_device(device)

# Create Tensors to hold input and outputs.
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)

# Create random Tensors for weights: y = a + b x + c x^2 + d x^3
a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(2000):
    # Forward pass: compute predicted y using operations on Tensors.
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    # Compute and print loss using operations on Tensors.
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    # Use autograd to compute the backward pass.
    loss.backward()

    # Manually update weights using gradient descent.
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Manually zero the gradients after updating weights
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
        # a.grad, b.grad, c.grad, d.grad = 0. , 0. , 0. , 0.   (PyTorch 2.13 raises TypeError)

print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
assert loss.item() < 50, loss.item()
