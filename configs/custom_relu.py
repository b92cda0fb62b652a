"""The tutorial's custom ReLU: an autograd Function with a hand-written backward.

``custom_relu.yaml`` uses it as a layer (``type: custom_relu.py:MyReLU``): a Function without
``params`` becomes a layer computing ``MyReLU.apply(x)``.
"""

import autogradcli as torch


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input
