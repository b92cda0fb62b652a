"""Deep Learning with PyTorch: A 60 Minute Blitz - What is PyTorch? (tensors).

Source: https://github.com/pytorch/tutorials/blob/08c4ec986e5eddc66264d3f00f256aafe22d2786/beginner_source/blitz/tensor_tutorial.py
Licence: BSD-3-Clause (Copyright (c) 2017-2022, Pytorch contributors).

Changes in the port:
- imports: torch -> autogradcli; the tutorial's prose comments are dropped.
- torch.manual_seed(0) added.
- outcome: asserts what the page states after each step: shapes and dtypes, the three additions
  agree (including `out=`), in-place add_, the views' sizes, and that the NumPy bridge shares
  memory both ways.
"""

from __future__ import print_function
import autogradcli as torch

torch.manual_seed(0)

x = torch.empty(5, 3)
print(x)

x = torch.rand(5, 3)
print(x)

x = torch.zeros(5, 3, dtype=torch.long)
print(x)
assert x.dtype == torch.int64 and (x == 0).all()

x = torch.tensor([5.5, 3])
print(x)

x = x.new_ones(5, 3, dtype=torch.double)      # new_* methods take in sizes
print(x)
assert x.dtype == torch.float64 and x.shape == (5, 3)

x = torch.randn_like(x, dtype=torch.float)    # override dtype!
print(x)                                      # result has the same size
assert x.dtype == torch.float32

print(x.size())
assert x.size() == (5, 3)

y = torch.rand(5, 3)
print(x + y)

print(torch.add(x, y))

result = torch.empty(5, 3)
torch.add(x, y, out=result)
print(result)
assert torch.equal(result, x + y)

# adds x to y
expected = x + y
y.add_(x)
print(y)
assert torch.equal(y, expected)

print(x[:, 1])

x = torch.randn(4, 4)
y = x.view(16)
z = x.view(-1, 8)  # the size -1 is inferred from other dimensions
print(x.size(), y.size(), z.size())
assert z.size() == (2, 8)

x = torch.randn(1)
print(x)
print(x.item())
assert isinstance(x.item(), float)

a = torch.ones(5)
print(a)

b = a.numpy()
print(b)

a.add_(1)
print(a)
print(b)
assert (b == 2).all()

import numpy as np
a = np.ones(5)
b = torch.from_numpy(a)
np.add(a, 1, out=a)
print(a)
print(b)
assert (b == 2).all() and b.dtype == torch.float64

if torch.cuda.is_available():
    device = torch.device("cuda")          # a CUDA device object
    y = torch.ones_like(x, device=device)  # directly create a tensor on GPU
    x = x.to(device)                       # or just use strings ``.to("cuda")``
    z = x + y
    print(z)
    print(z.to("cpu", torch.double))       # ``.to`` can also change dtype together!
