# fmt: off
# ruff: noqa
"""Seed 001, block 2: ``LinearFunction`` (static methods), its helpers, and gradcheck on an instance.

Source: shared/seeds/001_ab43ad7be7a57c4c.txt ("Pytorch使用autograd.Function自定义拓展神经网络",
CSDN), the LinearFunction block, the helper block and the gradcheck block, in page order.

Changes made in the port:
- imports renamed to autogradcli.
- REPAIRED (broken on any engine): ``import torch.autograd.Function as Function`` fails everywhere
  (Function is a class, not a module): it is ``from ... import Function``. ``Variable`` was used
  without an import: added. ``linear(input, weight, bias)`` used three names the page never defines:
  they are defined just before the call. The gradcheck passed one tensor to a Function that needs
  ``input`` and ``weight``: a weight is added as in seed 003.
- The page calls an INSTANCE of this static-method Function (``LinearFunction()(...)`` in the
  helper, ``gradcheck(LinearFunction(), ...)``): autogradcli runs it as ``LinearFunction.apply`` with
  a DeprecationWarning; PyTorch 2.x refuses it ("Legacy autograd function with non-static forward
  method is deprecated"), so this file runs on autogradcli only.
- Outcome checks (added): gradcheck prints True (as the page's comment says), ``ctx.saved_variables``
  warns as PyTorch does, and the helper and ``apply`` give the same values and gradients.
"""

import warnings

import autogradcli as torch
from autogradcli.autograd import Function  # REPAIRED: was `import torch.autograd.Function as Function`
from autogradcli.autograd import Variable  # REPAIRED: used without an import


class LinearFunction(Function):
   # 创建torch.autograd.Function类的一个子类
    # 必须是staticmethod
    @staticmethod
    # 第一个是ctx,第二个是input,其他是可选参数。
    # ctx在这里类似self,ctx的属性可以在backward中调用。
    # 自己定义的Function中的forward()方法,所有的Variable参数将会转成tensor!因此这里的input也是tensor.在传入forward前,autograd engine会自动将Variable unpack成Tensor。
    def forward(ctx, input, weight, bias=None):
        print(type(input))
        ctx.save_for_backward(input, weight, bias) # 将Tensor转变为Variable保存到ctx中
        output = input.mm(weight.t())  # torch.t()方法,对2D tensor进行转置
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output) #unsqueeze(0) 扩展处第0维
            # expand_as(tensor)等价于expand(tensor.size()), 将原tensor按照新的size进行扩展
        return output

    @staticmethod
    def backward(ctx, grad_output):
        # grad_output为反向传播上一级计算得到的梯度值
        input, weight, bias = ctx.saved_variables
        grad_input = grad_weight = grad_bias = None
        # 分别代表输入,权值,偏置三者的梯度
        # 判断三者对应的Variable是否需要进行反向求导计算梯度
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight) # 复合函数求导,链式法则
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input) # 复合函数求导,链式法则
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)

        return grad_input, grad_weight, grad_bias


#建议把新操作封装在一个函数中
def linear(input, weight, bias=None):
    # First braces create a Function object. Any arguments given here
    # will be passed to __init__. Second braces will invoke the __call__
    # operator, that will then use forward() to compute the result and
    # return it.
    return LinearFunction()(input, weight, bias)#调用forward()


# REPAIRED: the page calls linear(input, weight, bias) without defining these three
input = torch.randn(4, 3, requires_grad=True)
weight = torch.randn(5, 3, requires_grad=True)
bias = torch.randn(5, requires_grad=True)

# ---- outcome check (not in the page): the helper, an instance call, warns and works ----
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out_helper = linear(input, weight, bias)
    out_helper.sum().backward()
assert any(issubclass(w.category, DeprecationWarning) and "should not be instantiated" in str(w.message)
           for w in caught), [str(w.message) for w in caught]
assert any("saved_variables" in str(w.message) for w in caught), [str(w.message) for w in caught]
grads_helper = [input.grad.clone(), weight.grad.clone(), bias.grad.clone()]
inputs_used = (input.detach(), weight.detach())
input.grad = weight.grad = bias.grad = None

# 或者使用apply方法对自己定义的方法取个别名,再调用
linear = LinearFunction.apply
linear(input, weight, bias)
#检查实现的backward()是否正确
from autogradcli.autograd import gradcheck
# gradchek takes a tuple of tensor as input, check if your gradient
# evaluated with these tensors are close enough to numerical
# approximations and returns True if they all verify this condition.
input = (Variable(torch.randn(20,20).double(), requires_grad=True),
         Variable(torch.randn(30,20).double(), requires_grad=True),)  # REPAIRED: the weight was missing
test = gradcheck(LinearFunction(), input, eps=1e-6, atol=1e-4)
print(test)  # 没问题的话输出True

# ---- outcome checks (not in the page) ----
assert test is True
g = torch.ones(4, 5)
x0, w0 = inputs_used
assert torch.allclose(out_helper, x0.mm(w0.t()) + bias.detach())
assert torch.allclose(grads_helper[0], g.mm(w0))
assert torch.allclose(grads_helper[1], g.t().mm(x0))
assert torch.allclose(grads_helper[2], torch.full((5,), 4.0))
