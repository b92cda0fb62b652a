"""``Module.register_backward_hook`` (PyTorch's legacy, non-full hook) and the ``Node.register_hook``
it is built on, against PyTorch: gradients seen and replaced, warnings, and the mixing error."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag


def _net(m):
    lin = m.nn.Linear(3, 2)
    with m.no_grad():
        lin.weight.copy_(m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 7))
        lin.bias.fill_(0.1)
    return lin, m.nn.Sigmoid()


def _run(m):
    lin, act = _net(m)
    seen = []
    act.register_backward_hook(
        lambda mod, gi, go: seen.append([g.detach().numpy().copy() for g in gi + go])
    )
    lin.register_backward_hook(lambda mod, gi, go: tuple(None if g is None else 2 * g for g in gi))
    x = m.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = act(lin(x))
    (y * m.arange(4.0).reshape(2, 2)).sum().backward()
    with pytest.raises(RuntimeError) as err:
        lin.register_full_backward_hook(lambda *a: None)
    messages = [(w.category, str(w.message)) for w in caught]
    return seen, x.grad.numpy(), lin.weight.grad.numpy(), messages, str(err.value)


def test_legacy_backward_hooks_see_and_replace_the_output_nodes_gradients_as_torch():
    ours, theirs = _run(ag), _run(torch)
    assert len(ours[0]) == len(theirs[0]) == 1
    for a, b in zip(ours[0][0], theirs[0][0]):  # Sigmoid's grad_input and grad_output
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)  # doubled by Linear's hook
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    # Linear's node is not its whole forward: PyTorch's FutureWarning, once; Sigmoid's is
    assert ours[3] == theirs[3] and len(ours[3]) == 1 and ours[3][0][0] is FutureWarning
    assert ours[4] == theirs[4] and "Cannot use both" in ours[4]


def test_node_hook_must_return_as_many_gradients_as_torch():
    def run(m):
        y = m.ones(3, requires_grad=True).exp()
        y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError) as err:
            y.sum().backward()
        return str(err.value)

    assert run(ag) == run(torch)
