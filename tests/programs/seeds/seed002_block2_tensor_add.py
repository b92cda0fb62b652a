# fmt: off
# ruff: noqa
"""Seed 002, block 2: ``torch.rand``, ``torch.add`` and the in-place ``x.add_(y)``.

Source: shared/seeds/002_85e5c199ee7f14da.txt (Chinese tutorial on PyTorch's main concepts), the
Tensor block (flattened onto one line in the page; re-broken at statement boundaries).

Changes made in the port:
- imports: ``import torch`` was not in the block (the page's first block has it); added, renamed.
- REPAIRED (broken on every engine): the block is Python 2 (``print x y``, which is not even valid
  Python 2 for two values): ``print(x, y)``, ``print(torch.add(x, y))``, ``print(x.add_(y))``.
- Outcome checks (added): ``add`` equals ``x + y`` and ``add_`` changes ``x`` in place.
"""

import autogradcli as torch

x = torch.rand(5, 3)
y = torch.rand(5, 3)
x0 = x.clone()  # (added for the outcome check)
print(x, y)  # REPAIRED: was `print x y`
print(torch.add(x, y))  # REPAIRED: was `print torch.add(x, y)`
print(x.add_(y))  # REPAIRED: was `print x.add_(y)`

# ---- outcome checks (not in the page) ----
assert torch.equal(torch.add(x0, y), x0 + y)
assert torch.equal(x, x0 + y)
assert float(x0.min()) >= 0.0 and float(x0.max()) < 1.0
