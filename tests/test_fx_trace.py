"""autogradcli.fx.symbolic_trace against torch.fx on the same model code: nodes, printed graph,
generated code, GraphModule outputs and state, and the tracing errors."""

from __future__ import annotations

import numpy as np
import pytest
from lazy_torch import torch
from module_oracle import load_torch_state

import autogradcli as ag
import autogradcli.fx as fx
import autogradcli.nn as nn
import autogradcli.nn.functional as F


def _net(t):
    class Net(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = t.nn.Linear(4, 3)
            self.seq = t.nn.Sequential(t.nn.Linear(3, 3), t.nn.ReLU())
            self.register_buffer("b", t.ones(3))
            self.p = t.nn.Parameter(t.ones(3) * 0.5)

        def forward(self, x, input):
            y = self.seq(t.relu(self.lin(x)) + 1) * self.p - self.b
            z = t.cat([y, y], dim=1)
            z = z.view(z.size(0), -1).sum(dim=-1, keepdim=True)
            return 2 - t.tanh(z)[0], x.T, y.transpose(0, 1) @ input, -y, z.shape[0] * x

    return Net


def _swap(text: str) -> str:
    return text.replace("torch.", "autogradcli.")


def _numpy(t) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "numpy") else np.asarray(t)


def test_graph_code_state_and_outputs_match_torch():
    theirs = torch.fx.symbolic_trace(_net(torch)())
    model = _net(ag)()
    load_torch_state(model, theirs)
    gm = fx.symbolic_trace(model)
    assert str(gm.graph) == _swap(str(theirs.graph))
    assert gm.code == _swap(theirs.code)
    assert list(gm.state_dict()) == list(theirs.state_dict())
    assert repr(gm) == repr(theirs).replace("torch.", "autogradcli.")
    assert isinstance(gm, fx.GraphModule) and isinstance(gm, nn.Module)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    inp = np.random.default_rng(1).standard_normal((2, 5)).astype("float32")
    ours_out = gm(ag.tensor(x), ag.tensor(inp))
    orig_out = model(ag.tensor(x), ag.tensor(inp))
    torch_out = theirs(torch.tensor(x), torch.tensor(inp))
    for a, b, c in zip(ours_out, orig_out, torch_out):
        np.testing.assert_allclose(_numpy(a), _numpy(b), rtol=1e-6)
        np.testing.assert_allclose(_numpy(a), _numpy(c), rtol=1e-5, atol=1e-6)
        assert a.dtype == ag.float32


def _functional(t):
    class Fn(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = t.nn.Parameter(t.ones(3, 4))

        def forward(self, x):
            h = t.nn.functional.linear(x, self.w)
            h = t.nn.functional.softmax(h, dim=-1) + t.flatten(h, 1)
            return t.nn.functional.dropout(h, p=0.5, training=False)

    return Fn


def _ops_and_targets(graph) -> list[tuple[str, str]]:
    """(op, printed target) per node; torch's F.linear is its C function torch._C._nn.linear."""
    targets = [_swap(n.format_node().split("target=")[-1].split("]")[0]) for n in graph.nodes]
    fixed = [t.replace("autogradcli._C._nn.", "autogradcli.nn.functional.") for t in targets]
    return [(n.op, t) for n, t in zip(graph.nodes, fixed)]


def test_functional_calls_are_recorded_under_their_namespace():
    theirs = torch.fx.symbolic_trace(_functional(torch)())
    gm = fx.symbolic_trace(_functional(ag)())
    assert _ops_and_targets(gm.graph) == _ops_and_targets(theirs.graph)
    x = ag.randn(2, 4)
    np.testing.assert_allclose(_numpy(gm(x)), _numpy(gm._graph.owning_module(x)), rtol=1e-6)
    assert [n.target for n in gm.graph.nodes][2] is F.linear


def test_tensor_constants_become_buffers_like_torch():
    def make(t):
        class N(t.nn.Module):
            def forward(self, x):
                return x + t.ones(3)

        return N

    theirs = torch.fx.symbolic_trace(make(torch)())
    gm = fx.symbolic_trace(make(ag)())
    assert gm.code == theirs.code
    assert list(gm.state_dict()) == ["_tensor_constant0"]
    np.testing.assert_array_equal(_numpy(gm(ag.zeros(2, 3))), np.ones((2, 3), "float32"))


def _errors(t):
    def branch(x):
        if x.sum() > 0:
            return x
        return -x

    def loop(x):
        return [v for v in x]

    def length(x):
        return x * len(x)

    return branch, loop, length


@pytest.mark.parametrize("which", [0, 1, 2])
def test_tracing_errors_are_torchs(which):
    ours = _errors(ag)[which]
    with pytest.raises(Exception) as theirs:
        torch.fx.symbolic_trace(_errors(torch)[which])
    with pytest.raises(Exception) as got:
        fx.symbolic_trace(ours)
    assert type(got.value).__name__ == type(theirs.value).__name__
    assert isinstance(got.value, type(theirs.value).__mro__[1])
    assert str(got.value) == str(theirs.value).replace("torch.fx.wrap", "autogradcli.fx.wrap")


def test_patches_are_undone_even_when_tracing_fails():
    originals = (ag.relu, ag.cat, F.relu)
    with pytest.raises(fx.TraceError):
        fx.symbolic_trace(_errors(ag)[0])
    assert (ag.relu, ag.cat, F.relu) == originals
    assert "__call__" not in vars(nn.Module) and "__getattr__" in vars(nn.Module)
    assert ag.relu(ag.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


def test_tuple_unpacking_and_concrete_args():
    def f(x, flip):
        a, b = x.chunk(2)
        return b - a if flip else a - b

    gm = fx.symbolic_trace(f, concrete_args={"flip": True})
    x = ag.arange(4.0)
    assert gm(x).tolist() == [2.0, 2.0]
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][-1].__name__ == "sub"
    assert type(gm).__name__ == "f"


def _buffers_and_math(t):
    import math

    class M(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("m", t.ones(3))
            self.emb = t.nn.Embedding(5, 3)
            self.ln = t.nn.LayerNorm(3)

        def forward(self, x, idx):
            h = (self.m + x) * 2 - self.m * x / (self.m @ x.T).unsqueeze(-1) + self.m**x
            h = self.ln(h + self.emb(idx)) / math.sqrt(h.size(-1))
            h = h.masked_fill(h > 0, 0.0).softmax(-1)
            return t.where(h > 0.3, h, t.zeros_like(h)), h.float(), h.shape, h.dtype

    return M


def test_tensor_operands_math_and_layers_like_torch():
    theirs = torch.fx.symbolic_trace(_buffers_and_math(torch)())
    model = _buffers_and_math(ag)()
    load_torch_state(model, theirs)
    gm = fx.symbolic_trace(model)
    assert gm.code == _swap(theirs.code)
    x = np.random.default_rng(2).standard_normal((2, 3)).astype("float32")
    idx = np.array([1, 4])
    ours = gm(ag.tensor(x), ag.tensor(idx))
    ref = theirs(torch.tensor(x), torch.tensor(idx))
    for a, b in zip(ours[:2], ref[:2]):
        np.testing.assert_allclose(_numpy(a), _numpy(b), rtol=1e-5, atol=1e-6)
    assert tuple(ours[2]) == tuple(ref[2]) and ours[3] == ag.float32


def _annotated(t):
    from typing import Optional

    class M(t.nn.Module):
        def forward(self, x, n=2, y=None, z=None):
            return x * n

    M.forward.__annotations__ = {"x": t.Tensor, "n": int, "y": Optional[t.Tensor], "z": "List[int]"}  # noqa: UP045
    M.forward.__annotations__["return"] = t.Tensor
    return M


def test_annotations_print_and_generate_like_torch():
    theirs = torch.fx.symbolic_trace(_annotated(torch)())
    gm = fx.symbolic_trace(_annotated(ag)())
    assert str(gm.graph) == _swap(str(theirs.graph))
    assert gm.code == _swap(theirs.code)
    assert gm(ag.ones(2), 3).tolist() == [3.0, 3.0]


def test_a_proxy_in_unrecorded_code_gets_a_note():
    from autogradcli.ops import join

    def f(x):
        return join.cat([x, x])  # an internal module: not a namespace fx records

    with pytest.raises(TypeError) as err:
        fx.symbolic_trace(f)
    assert "got Proxy" in str(err.value)
    assert any("does not record it" in note for note in err.value.__notes__)


def test_str_and_print_readable_like_torch():
    def make(t):
        class M(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = t.nn.Linear(2, 2)

            def forward(self, x):
                return t.relu(self.lin(x))

        return M

    theirs = torch.fx.symbolic_trace(make(torch)())
    gm = fx.symbolic_trace(make(ag)())
    assert str(gm) == _swap(str(theirs))
    assert gm.print_readable(print_output=False) == _swap(theirs.print_readable(print_output=False))


def _aliases(t):
    def f(x):
        return t.clip(x, 0, 1) + t.clamp(x, 0, 1)

    return f


def test_an_alias_is_recorded_under_the_name_called():
    assert fx.symbolic_trace(_aliases(ag)).code == _swap(
        torch.fx.symbolic_trace(_aliases(torch)).code
    )


def test_an_appending_tracer_made_during_a_trace_leaves_nothing_patched():
    import gc

    originals = (ag.relu, F.relu)
    held = []

    def f(x):
        held.append(fx.proxy.GraphAppendingTracer(fx.Graph()))  # outlives the trace
        return ag.relu(x)

    fx.symbolic_trace(f)
    assert ag.relu is not originals[0]  # still recording for the live tracer
    held.clear()
    gc.collect()
    assert (ag.relu, F.relu) == originals


def _functional_calls(t):
    fn = t.nn.functional
    return [
        lambda x: fn.relu(x),
        lambda x: fn.leaky_relu(x, 0.2),
        lambda x: fn.softmax(x, -1),
        lambda x: fn.dropout(x, 0.1, training=False),
        lambda x: fn.layer_norm(x, (4,)),
        lambda x: fn.max_pool2d(x, 2),
        lambda x: fn.interpolate(x, scale_factor=2.0),
        lambda x: fn.cross_entropy(x, x),
        lambda x: fn.pad(x, (1, 1)),
        lambda x: fn.linear(x, x),  # a C function in torch: only the arguments given
    ]


def _first_call(graph) -> tuple[str, str, str]:
    node = next(n for n in graph.nodes if n.op == "call_function")
    return node.target.__name__, repr(node.args), repr(node.kwargs)


def test_functional_calls_record_defaults_as_torchs_python_functions_do():
    theirs = [_first_call(torch.fx.symbolic_trace(f).graph) for f in _functional_calls(torch)]
    ours = [_first_call(fx.symbolic_trace(f).graph) for f in _functional_calls(ag)]
    assert ours == theirs
    assert ours[0] == ("relu", "(x,)", "{'inplace': False}")
