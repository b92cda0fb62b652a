"""Dive into Deep Learning (d2l.ai), 3.2 Linear Regression Implementation from Scratch, PyTorch tab.

Source: https://github.com/d2l-ai/d2l-en, chapter_linear-networks/linear-regression-scratch.md
(the d2l 0.16/0.17 version with `#@tab pytorch` code blocks; the blocks for "pytorch" and "all"
are taken in page order). Licence: the book's code is MIT-0 (the text CC BY-SA 4.0).

Changes in the port:
- imports: torch -> autogradcli; `from d2l import torch as d2l` -> the four aliases these blocks
  use, as the d2l package defines them for PyTorch (normal, matmul, reshape, tensor); the
  matplotlib scatter plot is dropped.
- random.seed(0) and torch.manual_seed(0) added; outcome: asserts what the page states, the
  training loss ends near zero (below 1e-3) and the estimated w and b are within 0.05 of the truth.
"""
import random
import types
import autogradcli as torch

random.seed(0)
torch.manual_seed(0)

# the aliases of d2l/torch.py that these code blocks use
d2l = types.SimpleNamespace(
    normal=torch.normal, matmul=torch.matmul, tensor=torch.tensor,
    reshape=lambda x, *args, **kwargs: x.reshape(*args, **kwargs))


def synthetic_data(w, b, num_examples):  #@save
    """Generate y = Xw + b + noise."""
    X = d2l.normal(0, 1, (num_examples, len(w)))
    y = d2l.matmul(X, w) + b
    y += d2l.normal(0, 0.01, y.shape)
    return X, d2l.reshape(y, (-1, 1))

true_w = d2l.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 1000)

print('features:', features[0],'\nlabel:', labels[0])

def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    # The examples are read at random, in no particular order
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = d2l.tensor(
            indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]

batch_size = 10

for X, y in data_iter(batch_size, features, labels):
    print(X, '\n', y)
    break

w = torch.normal(0, 0.01, size=(2,1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)

def linreg(X, w, b):  #@save
    """The linear regression model."""
    return d2l.matmul(X, w) + b

def squared_loss(y_hat, y):  #@save
    """Squared loss."""
    return (y_hat - d2l.reshape(y, y_hat.shape)) ** 2 / 2

def sgd(params, lr, batch_size):  #@save
    """Minibatch stochastic gradient descent."""
    for param in params:
        param.data.sub_(lr*param.grad/batch_size)
        param.grad.data.zero_()

lr = 0.03
num_epochs = 3
net = linreg
loss = squared_loss

for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)  # Minibatch loss in `X` and `y`
        # Compute gradient on `l` with respect to [`w`, `b`]
        l.sum().backward()
        sgd([w, b], lr, batch_size)  # Update parameters using their gradient
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')

print(f'error in estimating w: {true_w - d2l.reshape(w, true_w.shape)}')
print(f'error in estimating b: {true_b - b}')

assert float(train_l.mean()) < 1e-3
assert (true_w - d2l.reshape(w, true_w.shape)).abs().max().item() < 0.05
assert abs(true_b - b.item()) < 0.05
