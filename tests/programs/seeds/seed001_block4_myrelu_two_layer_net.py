# fmt: off
# ruff: noqa
"""Seed 001, block 4: the old official tutorial's two-layer net with a custom ``MyReLU`` on Variables.

Source: shared/seeds/001_ab43ad7be7a57c4c.txt ("Pytorch使用autograd.Function自定义拓展神经网络",
CSDN), the last code block ("最后放上官方教程", PyTorch 0.3's "Learning PyTorch with Examples",
two_layer_net_custom_function.py).

Changes made in the port:
- imports renamed to autogradcli.
- REPAIRED (broken on every engine since PyTorch 0.4): ``loss.data[0]`` indexes a 0-dim tensor
  (PyTorch: "invalid index of a 0-dim tensor. Use `tensor.item()`..."); it is ``loss.item()``.
- Outcome check (added): the loss printed falls (the tutorial's point: training works).
"""

# -*- coding: utf-8 -*-
import autogradcli as torch
from autogradcli.autograd import Variable


class MyReLU(torch.autograd.Function):
    """
    We can implement our own custom autograd Functions by subclassing
    torch.autograd.Function and implementing the forward and backward passes
    which operate on Tensors.
    """

    @staticmethod
    def forward(ctx, input):
        """
        In the forward pass we receive a Tensor containing the input and return
        a Tensor containing the output. ctx is a context object that can be used
        to stash information for backward computation. You can cache arbitrary
        objects for use in the backward pass using the ctx.save_for_backward method.
        """
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        """
        In the backward pass we receive a Tensor containing the gradient of the loss
        with respect to the output, and we need to compute the gradient of the loss
        with respect to the input.
        """
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


dtype = torch.FloatTensor
# dtype = torch.cuda.FloatTensor # Uncomment this to run on GPU

# N is batch size; D_in is input dimension;
# H is hidden dimension; D_out is output dimension.
N, D_in, H, D_out = 64, 1000, 100, 10

# Create random Tensors to hold input and outputs, and wrap them in Variables.
x = Variable(torch.randn(N, D_in).type(dtype), requires_grad=False)
y = Variable(torch.randn(N, D_out).type(dtype), requires_grad=False)

# Create random Tensors for weights, and wrap them in Variables.
w1 = Variable(torch.randn(D_in, H).type(dtype), requires_grad=True)
w2 = Variable(torch.randn(H, D_out).type(dtype), requires_grad=True)

losses = []  # (added for the outcome check)
learning_rate = 1e-6
for t in range(500):
    # To apply our Function, we use Function.apply method. We alias this as 'relu'.
    relu = MyReLU.apply

    # Forward pass: compute predicted y using operations on Variables; we compute
    # ReLU using our custom autograd operation.
    y_pred = relu(x.mm(w1)).mm(w2)

    # Compute and print loss
    loss = (y_pred - y).pow(2).sum()
    print(t, loss.item())  # REPAIRED: was loss.data[0] (a 0-dim tensor cannot be indexed)
    losses.append(loss.item())

    # Use autograd to compute the backward pass.
    loss.backward()

    # Update weights using gradient descent
    w1.data -= learning_rate * w1.grad.data
    w2.data -= learning_rate * w2.grad.data

    # Manually zero the gradients after updating weights
    w1.grad.data.zero_()
    w2.grad.data.zero_()

# ---- outcome checks (not in the page) ----
assert x.type() == "torch.FloatTensor" and w1.dtype == torch.float32
assert losses[-1] < 0.01 * losses[0], (losses[0], losses[-1])
