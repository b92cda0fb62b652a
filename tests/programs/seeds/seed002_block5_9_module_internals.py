# fmt: off
# ruff: noqa
"""Seed 002, blocks 5-9: the page's quotes of PyTorch's own source, run against the engine.

Source: shared/seeds/002_85e5c199ee7f14da.txt (Chinese tutorial on PyTorch's main concepts): the
quoted ``Module.__init__`` sketch, ``Module.__setattr__``, ``nn.Linear``, ``Module.__call__`` and
``F.linear`` (PyTorch 0.3-0.4 source). Block 10 of the page is ``loss.backward()`` alone, run by the
block-1 program. The page flattened every block onto one line; re-broken at statement boundaries.

Changes made in the port:
- imports: the quotes use ``OrderedDict``, ``Parameter``, ``Module``, ``Variable``, ``math``,
  ``functools``, ``F`` and ``torch`` without importing them (they are excerpts of files whose
  import lines the page left out); the imports below are those files' own, renamed.
- REPAIRED (broken by the page's saving): ``\\'`` escapes inside the quoted strings are plain quotes.
  The ``__setattr__`` quote ends in ``......``, a syntax error standing for the rest of the method;
  its final fallback, ``object.__setattr__(self, name, value)``, is restored so that plain attributes
  can still be set. ``F.linear``'s ``output = bias`` lost its ``+`` (``output += bias``).
- The quotes are methods shown outside their class; each is attached to a small subclass of the
  real ``nn.Module`` (added lines, marked) so that it runs against the engine's own Module state.
  The sketch ``class Module(object)`` would shadow the real one: it is renamed ``ModuleSketch``.
- Outcome checks (added): each quote does what the page explains: ``__setattr__`` files Modules
  into ``_modules`` and Parameters into ``_parameters`` and refuses a tensor for a parameter in
  PyTorch's words; ``__call__`` runs pre-hooks, ``forward`` and hooks; ``Linear`` initialises in
  ``[-1/sqrt(in), 1/sqrt(in)]``; ``linear`` equals ``F.linear``.
"""

import functools
import math
from collections import OrderedDict

import autogradcli as torch
import autogradcli.nn.functional as F
from autogradcli.autograd import Variable
from autogradcli.nn import Module, Parameter


# ---- block 5: the Module.__init__ sketch ----
class ModuleSketch(object):  # (renamed from `Module`, see header)
    def __init__(self):
        self._parameters = OrderedDict()
        self._modules = OrderedDict()
        ...

sketch = ModuleSketch()
assert sketch._parameters == OrderedDict() and sketch._modules == OrderedDict()


# ---- block 6: Module.__setattr__ ----
def __setattr__(self, name, value):
    def remove_from(*dicts):
        for d in dicts:
            if name in d:
                del d[name]
    params = self.__dict__.get('_parameters')
    if isinstance(value, Parameter):  # ----------- <1>
        if params is None:
            raise AttributeError(
                "cannot assign parameters before Module.__init__() call")
        remove_from(self.__dict__, self._buffers, self._modules)
        self.register_parameter(name, value)
    elif params is not None and name in params:
        if value is not None:
            raise TypeError("cannot assign '{}' as parameter '{}' "
                            "(torch.nn.Parameter or None expected)"
                            .format(torch.typename(value), name))
        self.register_parameter(name, value)
    else:
        modules = self.__dict__.get('_modules')
        if isinstance(value, Module):  # ----------- <2>
            if modules is None:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError("cannot assign '{}' as child module '{}' "
                                "(torch.nn.Module or None expected)"
                                .format(torch.typename(value), name))
            modules[name] = value
        else:  # REPAIRED: the page cut the method here with "......"
            object.__setattr__(self, name, value)


class SetattrProbe(Module):  # (added: runs the quoted __setattr__ on a real Module)
    __setattr__ = __setattr__


probe = SetattrProbe()
probe.linear = torch.nn.Linear(4, 2)
probe.scale = Parameter(torch.ones(2))
probe.note = "plain attribute"
assert list(probe._modules) == ["linear"] and list(probe._parameters) == ["scale"]
assert [n for n, _ in probe.named_parameters()] == ["scale", "linear.weight", "linear.bias"]
assert probe.note == "plain attribute"
try:
    probe.scale = torch.ones(2)
    raise AssertionError("a plain tensor was accepted as a parameter")
except TypeError as e:
    assert str(e) == ("cannot assign 'torch.FloatTensor' as parameter 'scale' "
                      "(torch.nn.Parameter or None expected)"), str(e)


# ---- block 7: nn.Linear ----
class Linear(Module):
    def __init__(self, in_features, out_features, bias=True):
        super(Linear, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.Tensor(out_features, in_features))
        if bias:
            self.bias = Parameter(torch.Tensor(out_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)


lin = Linear(4, 2)
assert float(lin.weight.abs().max()) <= 0.5 and float(lin.bias.abs().max()) <= 0.5
assert float(lin.weight.abs().max()) > 0.0
x = torch.randn(3, 4)
assert torch.allclose(lin(x), x.mm(lin.weight.detach().t()) + lin.bias.detach())


# ---- block 8: Module.__call__ ----
def __call__(self, *input, **kwargs):
    for hook in self._forward_pre_hooks.values():
        hook(self, input)
    result = self.forward(*input, **kwargs)
    for hook in self._forward_hooks.values():
        hook_result = hook(self, input, result)
        if hook_result is not None:
            raise RuntimeError(
                "forward hooks should never return any values, but '{}'"
                "didn't return None".format(hook))
    if len(self._backward_hooks) > 0:
        var = result
        while not isinstance(var, Variable):
            var = var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in self._backward_hooks.values():
                wrapper = functools.partial(hook, self)
                functools.update_wrapper(wrapper, hook)
                grad_fn.register_hook(wrapper)
    return result


class CallProbe(Linear):  # (added: runs the quoted __call__ on the quoted Linear)
    __call__ = __call__


seen = []
cp = CallProbe(4, 2)
cp.register_forward_pre_hook(lambda m, inp: seen.append(("pre", inp[0].shape)))
cp.register_forward_hook(lambda m, inp, out: seen.append(("post", out.shape)))
out = cp(x)
assert seen == [("pre", (3, 4)), ("post", (3, 2))], seen
assert isinstance(out, Variable) and torch.equal(out, cp.forward(x))
cp.register_forward_hook(lambda m, inp, out: out)
try:
    cp(x)
    raise AssertionError("a forward hook returning a value was accepted")
except RuntimeError as e:
    assert "forward hooks should never return any values" in str(e)


# ---- block 9: F.linear ----
def linear(input, weight, bias=None):
    if input.dim() == 2 and bias is not None:
        # fused op is marginally faster
        return torch.addmm(bias, input, weight.t())
    output = input.matmul(weight.t())
    if bias is not None:
        output += bias  # REPAIRED: was `output = bias`
    return output


w, b = torch.randn(2, 4), torch.randn(2)
assert torch.allclose(linear(x, w, b), F.linear(x, w, b))
x3 = torch.randn(5, 3, 4)
assert torch.allclose(linear(x3, w, b), F.linear(x3, w, b))
assert torch.allclose(linear(x3, w), F.linear(x3, w))
print("module internals: ok")
