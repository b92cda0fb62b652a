# fmt: off
# ruff: noqa
"""Seed 002, block 1 (and block 4, the same ``Net`` quoted again): a softmax Net trained one SGD step.

Source: shared/seeds/002_85e5c199ee7f14da.txt (a Chinese tutorial on PyTorch's main concepts:
Tensor, Variable, Module internals, Optimizer/SGD), first code block; its code blocks were saved
flattened onto one line with their line numbers, re-broken here at the statement boundaries.

Changes made in the port: the imports (``torch`` -> ``autogradcli``). ``F.softmax`` without ``dim``
warns as in PyTorch ("Implicit dimension choice for softmax has been deprecated"). Outcome checks
(added): the step changes every parameter by exactly ``-lr * grad``.
"""

import autogradcli as torch
import autogradcli.nn as nn
import autogradcli.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.linear = nn.Linear(4, 2)
    def forward(self, input):
        out = F.softmax(self.linear(input))
        return out

net = Net()
sgd = torch.optim.SGD(net.parameters(), lr=0.001)
for epoch in range(1):
    features = torch.autograd.Variable(torch.randn(3, 4), requires_grad=True)
    target = torch.autograd.Variable(torch.LongTensor([1, 0, 1]))
    sgd.zero_grad()
    out = net(features)
    loss = F.cross_entropy(out, target)
    loss.backward()
    before = [p.detach().clone() for p in net.parameters()]  # (added for the outcome check)
    sgd.step()

# ---- outcome checks (not in the page) ----
assert isinstance(target, torch.LongTensor) and target.dtype == torch.int64
assert out.shape == (3, 2) and torch.allclose(out.sum(1), torch.ones(3))
for p, b in zip(net.parameters(), before):
    assert torch.allclose(p.detach(), b - 0.001 * p.grad)
print(loss.item())
