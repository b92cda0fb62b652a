# fmt: off
# ruff: noqa
"""Seed 004, example 1: ``MyExp``, a custom Function whose backward reuses the saved output.

Source: shared/seeds/004_9dd9f38ab66946c0.txt (a Chinese blog on custom autograd operators,
"实例一"), first code block.

Changes made in the port:
- imports: the block uses ``torch`` without importing it; ``import torch`` added, renamed.
- Outcome checks (added): the page's result screenshot was lost in saving; what it describes is
  that the custom gradient equals the built-in ``exp``'s: both print ``tensor([ 2.7183,  7.3891,
  20.0855])``, checked here as printed text and as values.
"""

import autogradcli as torch


class MyExp(torch.autograd.Function):
    """ 前向:y = exp(x), 微分:dydx = exp(x) """

    @staticmethod
    def forward(ctx, inputs):
        """ 实现前向传播逻辑 """
        outputs = inputs.exp()
        ctx.save_for_backward(outputs)
        return outputs

    @staticmethod
    def backward(ctx, grad_outputs):
        """ 实现反向传播, grad_outputs为损失对前向传播中输出的梯度,但需要计算的是损失对输入的梯度 """
        outputs, = ctx.saved_tensors
        return grad_outputs * outputs


inputs = torch.tensor([1.0, 2.0, 3.0], device='cpu', requires_grad=True)
outputs = MyExp.apply(inputs)
outputs.backward(torch.ones(outputs.shape))  # torch.ones(outputs.shape)为对自己的梯度
grad1 = inputs.grad
inputs.grad = None  # 梯度清零
print(grad1)
print("***********测试内置算子的梯度***********")
outputs = inputs.exp()
outputs.sum().backward()
grad2 = inputs.grad
print(grad2)

# ---- outcome checks (not in the page) ----
assert str(grad1) == "tensor([ 2.7183,  7.3891, 20.0855])", str(grad1)
assert str(grad2) == str(grad1)
assert torch.equal(grad1, grad2)
assert grad1.device == torch.device("cpu") and grad1.dtype == torch.float32
