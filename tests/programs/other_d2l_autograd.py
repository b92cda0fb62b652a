"""Dive into Deep Learning (d2l.ai), 2.5 Automatic Differentiation, PyTorch tab.

Source: https://github.com/d2l-ai/d2l-en, chapter_preliminaries/autograd.md (the d2l 0.17 version
with `#@tab pytorch` code blocks; the same blocks are in d2l-ai/d2l-zh). Licence: the book's code
is MIT-0 (the text CC BY-SA 4.0).

Changes in the port:
- imports: torch -> autogradcli; the notebook cells are run in order as one script.
- the cells' displayed expressions (`x.grad == 4 * x` and the others whose output the page shows
  as all True) become asserts, as do the gradients the page prints ([0, 4, 8, 12], [1, 1, 1, 1],
  [0, 2, 4, 6]); torch.manual_seed(0) added.
"""
import autogradcli as torch

torch.manual_seed(0)

x = torch.arange(4.0)
x

x.requires_grad_(True)  # Same as `x = torch.arange(4.0, requires_grad=True)`
x.grad  # The default value is None
assert x.grad is None

y = 2 * torch.dot(x, x)
y
assert y.item() == 28

y.backward()
x.grad
assert x.grad.tolist() == [0, 4, 8, 12]

assert (x.grad == 4 * x).all()

# PyTorch accumulates the gradient in default, we need to clear the previous
# values
x.grad.zero_()
y = x.sum()
y.backward()
x.grad
assert x.grad.tolist() == [1, 1, 1, 1]

# Invoking `backward` on a non-scalar requires passing in a `gradient` argument
# which specifies the gradient of the differentiated function w.r.t `self`.
# In our case, we simply want to sum the partial derivatives, so passing
# in a gradient of ones is appropriate
x.grad.zero_()
y = x * x
# y.backward(torch.ones(len(x))) equivalent to the below
y.sum().backward()
x.grad
assert x.grad.tolist() == [0, 2, 4, 6]

x.grad.zero_()
y = x * x
u = y.detach()
z = u * x

z.sum().backward()
assert (x.grad == u).all()

x.grad.zero_()
y.sum().backward()
assert (x.grad == 2 * x).all()

def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c

a = torch.randn(size=(), requires_grad=True)
d = f(a)
d.backward()

assert a.grad == d / a
print("d2l autograd: all of the page's results hold")
