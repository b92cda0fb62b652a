# fmt: off
# ruff: noqa
"""Seed 002, blocks 11-12: the page's quotes of ``optim.Optimizer`` and ``optim.SGD``, run for real.

Source: shared/seeds/002_85e5c199ee7f14da.txt (Chinese tutorial on PyTorch's main concepts), the
``class Optimizer(object)`` and ``class SGD(Optimizer)`` quotes (PyTorch 0.3-0.4 source). The page
flattened every block onto one line; re-broken at statement boundaries.

Changes made in the port:
- imports: the quotes use ``defaultdict``, ``Variable``, ``Optimizer``, ``required`` and ``torch``
  without importing them (excerpts of torch/optim/optimizer.py and sgd.py); those files' own
  imports are added, renamed.
- REPAIRED (broken on every engine): the ``Optimizer`` quote's ``"...but got " torch.typename(params)``
  lost its ``+`` (a syntax error); the ``......`` standing for the rest of ``__init__`` is dropped.
  The sketch would shadow the real base class that ``SGD`` extends (the quote of ``sgd.py`` imports
  the real one), so it is renamed ``OptimizerSketch``. ``\\'`` escapes are plain quotes.
- The written-out SGD uses the deprecated overloads ``add_(Number, Tensor)`` and
  ``add(Number, Tensor)``, which warn as in PyTorch.
- Outcome checks (added): the sketch refuses a tensor in PyTorch's words and its ``zero_grad``
  zeroes gradients through ``new().resize_as_().zero_()``; the written-out SGD, with momentum,
  dampening, weight decay and Nesterov, follows ``torch.optim.SGD`` step for step on the same model.
"""

import warnings
from collections import defaultdict

import autogradcli as torch
import autogradcli.nn as nn
import autogradcli.nn.functional as F
from autogradcli.autograd import Variable
from autogradcli.optim.optimizer import Optimizer, required


# ---- block 11: the Optimizer sketch ----
class OptimizerSketch(object):  # (renamed from `Optimizer`, see header)
    def __init__(self, params, defaults):
        if isinstance(params, Variable) or torch.is_tensor(params):
            raise TypeError("params argument given to the optimizer should be "
                            "an iterable of Variables or dicts, but got " +  # REPAIRED: `+` lost
                            torch.typename(params))
        self.state = defaultdict(dict)
        self.param_groups = list(params)
        # REPAIRED: the page's "......" (the rest of __init__) dropped

    def zero_grad(self):
        """Clears the gradients of all optimized :class:`Variable` s."""
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None:
                    if p.grad.volatile:
                        p.grad.data.zero_()
                    else:
                        data = p.grad.data
                        p.grad = Variable(data.new().resize_as_(data).zero_())

    def step(self, closure):
        """Performs a single optimization step (parameter update).

        Arguments:
            closure (callable): A closure that reevaluates the model and
                returns the loss. Optional for most optimizers.
        """
        raise NotImplementedError


# ---- block 12: SGD ----
class SGD(Optimizer):
    def __init__(self, params, lr=required, momentum=0, dampening=0,
                 weight_decay=0, nesterov=False):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super(SGD, self).__init__(params, defaults)

    def __setstate__(self, state):
        super(SGD, self).__setstate__(state)
        for group in self.param_groups:
            group.setdefault('nesterov', False)

    def step(self, closure=None):
        """Performs a single optimization step.

        Arguments:
            closure (callable, optional): A closure that reevaluates the model
                and returns the loss.
        """
        loss = None
        if closure is not None:
            loss = closure()

        for group in self.param_groups:
            weight_decay = group['weight_decay']
            momentum = group['momentum']
            dampening = group['dampening']
            nesterov = group['nesterov']

            for p in group['params']:
                if p.grad is None:
                    continue
                d_p = p.grad.data
                if weight_decay != 0:
                    d_p.add_(weight_decay, p.data)
                if momentum != 0:
                    param_state = self.state[p]
                    if 'momentum_buffer' not in param_state:
                        buf = param_state['momentum_buffer'] = d_p.clone()
                    else:
                        buf = param_state['momentum_buffer']
                        buf.mul_(momentum).add_(1 - dampening, d_p)
                    if nesterov:
                        d_p = d_p.add(momentum, buf)
                    else:
                        d_p = buf

                p.data.add_(-group['lr'], d_p)

        return loss


# ---- outcome checks (not in the page) ----
torch.manual_seed(0)
net = nn.Linear(4, 3)
try:
    OptimizerSketch(torch.ones(2), {})
    raise AssertionError("a tensor was accepted as params")
except TypeError as e:
    assert str(e) == ("params argument given to the optimizer should be an iterable of "
                      "Variables or dicts, but got torch.FloatTensor"), str(e)
sketch = OptimizerSketch([{'params': list(net.parameters())}], {})
net(torch.randn(2, 4)).sum().backward()
assert float(net.weight.grad.abs().sum()) > 0
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # `.volatile` warns that it was removed
    sketch.zero_grad()
assert torch.equal(net.weight.grad, torch.zeros(3, 4)) and net.weight.grad.dtype == torch.float32
assert torch.equal(net.bias.grad, torch.zeros(3))
try:
    sketch.step(None)
    raise AssertionError("the sketch's step did something")
except NotImplementedError:
    pass

features = torch.randn(8, 4)
target = torch.LongTensor([0, 1, 2, 1, 0, 2, 2, 1])
for kw in (dict(momentum=0.9, weight_decay=1e-2), dict(momentum=0.9, dampening=0.1),
           dict(momentum=0.9, nesterov=True), dict()):
    ours, ref = nn.Linear(4, 3), nn.Linear(4, 3)
    ref.load_state_dict(ours.state_dict())
    opt_ours, opt_ref = SGD(ours.parameters(), lr=0.1, **kw), torch.optim.SGD(ref.parameters(), lr=0.1, **kw)
    for step in range(5):
        for model, opt in ((ours, opt_ours), (ref, opt_ref)):
            opt.zero_grad()
            F.cross_entropy(model(features), target).backward()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the deprecated add_(Number, Tensor)
                opt.step()
    for p, q in zip(ours.parameters(), ref.parameters()):
        assert torch.allclose(p, q, atol=1e-6), (kw, p, q)
try:
    SGD(net.parameters(), lr=0.1, nesterov=True)
    raise AssertionError("nesterov without momentum was accepted")
except ValueError as e:
    assert str(e) == "Nesterov momentum requires a momentum and zero dampening"
print("optimizer quotes: ok")
