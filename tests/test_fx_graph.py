"""Graph surgery with autogradcli.fx as in pytorch/examples' fx examples, against torch.fx:
replacing and erasing nodes, insertion points, graphs built from Proxies, the Interpreter."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag
import autogradcli.fx as fx
import autogradcli.nn.functional as F


def _numpy(t) -> np.ndarray:
    return t.detach().numpy()


def _swap(text: str) -> str:
    """torch's text with our names (its F.gelu is the C function torch._C._nn.gelu)."""
    return text.replace("torch._C._nn.", "torch.nn.functional.").replace("torch.", "autogradcli.")


def _relu_net(t):
    class M(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = t.nn.Linear(3, 3)

        def forward(self, x, y):
            return t.relu(self.lin(x)) + y, t.add(x, y), x.add(y)

    return M


def _relu_to_gelu(t, gm):
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is t.relu:
            with gm.graph.inserting_after(n):
                new = gm.graph.call_function(t.nn.functional.gelu, n.args, n.kwargs)
            n.replace_all_uses_with(new)
            gm.graph.erase_node(n)
    gm.recompile()


def _add_to_mul(t, gm):
    patterns = {operator.add, t.add, "add"}
    for n in gm.graph.nodes:
        if any(n.target == p for p in patterns):
            with gm.graph.inserting_after(n):
                new = gm.graph.call_function(t.mul, n.args, n.kwargs)
                n.replace_all_uses_with(new)
            gm.graph.erase_node(n)
    gm.recompile()


def test_replace_ops_like_the_examples():
    theirs = torch.fx.symbolic_trace(_relu_net(torch)())
    gm = fx.symbolic_trace(_relu_net(ag)())
    gm.lin.load_state_dict(
        {k: ag.tensor(v.detach().numpy()) for k, v in theirs.lin.state_dict().items()}
    )
    for t, m in ((torch, theirs), (ag, gm)):
        _relu_to_gelu(t, m)
        _add_to_mul(t, m)
    assert gm.code == _swap(theirs.code)
    assert str(gm.graph) == _swap(str(theirs.graph))
    x, y = np.random.default_rng(0).standard_normal((2, 2, 3)).astype("float32")
    for a, b in zip(gm(ag.tensor(x), ag.tensor(y)), theirs(torch.tensor(x), torch.tensor(y))):
        np.testing.assert_allclose(_numpy(a), _numpy(b), rtol=1e-5, atol=1e-6)
    lin = ag.tensor(x) @ gm.lin.weight.T + gm.lin.bias
    np.testing.assert_allclose(
        _numpy(gm(ag.tensor(x), ag.tensor(y))[0]), _numpy(F.gelu(lin) * ag.tensor(y)), rtol=1e-6
    )


def _neg_exp(t):
    def f(x):
        return t.neg(x).exp() * 2

    return f


def test_erase_with_users_is_torchs_error_and_dead_code_goes():
    errors = []
    for t, lib in ((torch, torch.fx), (ag, fx)):
        gm = lib.symbolic_trace(_neg_exp(t))
        neg = next(n for n in gm.graph.nodes if n.name == "neg")
        with pytest.raises(RuntimeError) as err:
            gm.graph.erase_node(neg)
        errors.append(str(err.value))
        with gm.graph.inserting_before(neg):
            gm.graph.call_function(t.relu, (neg.prev,))  # unused: dead code
        assert len(gm.graph.nodes) == 6
        assert gm.graph.eliminate_dead_code() is True
        assert [n.name for n in gm.graph.nodes] == ["x", "neg", "exp", "mul", "output"]
    assert errors[0] == errors[1]


def test_lint_finds_a_use_before_definition():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(ag.exp, (x,))
    b = g.call_function(ag.neg, (a,))
    g.output(b)
    g.lint()
    a.args = (b,)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def test_proxy_built_graph_matches_torchs():
    codes = []
    for t, lib in ((torch, torch.fx), (ag, fx)):
        graph = lib.Graph()
        tracer = lib.proxy.GraphAppendingTracer(graph)
        x = lib.Proxy(graph.placeholder("x"), tracer)
        y = lib.Proxy(graph.placeholder("y"), tracer)
        b = t.tanh(t.cat([x, y]))
        c = t.neg(b)
        graph.output((c + 1).node)
        mod = lib.GraphModule(t.nn.Module(), graph)
        codes.append(mod.code)
    assert codes[1] == _swap(codes[0])
    out = mod(ag.zeros(2), ag.ones(1))
    np.testing.assert_allclose(_numpy(out), 1 - np.tanh([0, 0, 1]), rtol=1e-6)


def _relu_plus_one(t):
    class M(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.relu = t.nn.ReLU()

        def forward(self, x):
            return self.relu(x) + 1.0

    return M


def test_inline_a_module_call_with_proxies():
    codes = []
    for t, lib in ((torch, torch.fx), (ag, fx)):
        m = lib.symbolic_trace(_relu_plus_one(t)())
        tracer = lib.proxy.GraphAppendingTracer(m.graph)
        for node in m.graph.nodes:
            if (node.op, node.target) == ("call_module", "relu"):
                with m.graph.inserting_before(node):
                    args = lib.node.map_arg(node.args, lambda n, p=lib.Proxy, tr=tracer: p(n, tr))
                    out = m.relu(*args)
                    node.replace_all_uses_with(out.node)
                    m.graph.erase_node(node)
        m.recompile()
        codes.append(m.code)
    assert codes[1] == _swap(codes[0])
    assert m(ag.tensor([-2.0, 3.0])).tolist() == [1.0, 4.0]


def test_interpreter_runs_node_by_node_and_can_be_overridden():
    class NegRelu(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            if target is ag.relu:
                return ag.neg(*args)
            return super().call_function(target, args, kwargs)

    gm = fx.symbolic_trace(_relu_net(ag)())
    x, y = ag.randn(2, 3), ag.randn(2, 3)
    for a, b in zip(fx.Interpreter(gm).run(x, y), gm(x, y)):
        np.testing.assert_array_equal(_numpy(a), _numpy(b))
    swapped = NegRelu(gm).run(x, y)[0]
    np.testing.assert_allclose(_numpy(swapped), _numpy(-gm.lin(x) + y), rtol=1e-6)


def _camel(t):
    class Camel(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.convBlock = t.nn.Linear(2, 2)
            self.layer1A = t.nn.ReLU()

        def forward(self, x):
            return self.layer1A(self.convBlock(x))

    return Camel


def test_node_names_and_deepcopy_like_torch():
    import copy

    theirs = copy.deepcopy(torch.fx.symbolic_trace(_camel(torch)()))
    gm = fx.symbolic_trace(_camel(ag)())
    clone = copy.deepcopy(gm)
    assert [n.name for n in clone.graph.nodes] == [n.name for n in theirs.graph.nodes]
    assert type(clone).__name__ == type(theirs).__name__ == "GraphModule"
    assert clone.code == gm.code and clone.convBlock is not gm.convBlock
    x = ag.randn(3, 2)
    np.testing.assert_array_equal(_numpy(clone(x)), _numpy(gm(x)))
    clone.convBlock.weight.data.zero_()
    assert gm.convBlock.weight.abs().sum().item() > 0


def test_transformer_rewrites_like_torch():
    codes = []
    for t, lib in ((torch, torch.fx), (ag, fx)):

        class ReluToSigmoid(lib.Transformer):
            def call_function(self, target, args, kwargs, t=t):
                if target is t.relu:
                    target = t.sigmoid
                return super().call_function(target, args, kwargs)

        gm = lib.symbolic_trace(_relu_net(t)())
        new = ReluToSigmoid(gm).transform()
        codes.append(new.code)
    assert codes[1] == _swap(codes[0])
    x, y = ag.randn(2, 3), ag.randn(2, 3)
    expected = ag.sigmoid(gm.lin(x)) + y
    np.testing.assert_allclose(_numpy(new(x, y)[0]), _numpy(expected), rtol=1e-6)
    assert new.lin is gm.lin and type(new).__name__ == "GraphModule"


def _rewrite_case(t):
    class M(t.nn.Module):
        def forward(self, x, w1, w2):
            m1 = t.cat([t.neg(w1), w2]).sum()
            val2 = t.neg(w1)
            m2 = t.cat([val2, w2]).sum()
            return x + t.max(m1) + t.max(m2), val2 * 2  # val2 used outside: no match there

    def pattern(a1, a2):
        return t.cat([t.neg(a1), a2]).sum()

    def replacement(w1, w2):
        return t.stack([w1, w2])

    return M, pattern, replacement


def test_replace_pattern_like_torch():
    results = []
    for t, lib in ((torch, torch.fx), (ag, fx)):
        model, pattern, replacement = _rewrite_case(t)
        gm = lib.symbolic_trace(model())
        matches = lib.replace_pattern(gm, pattern, replacement)
        results.append((gm.code, len(matches), matches[0].anchor.name))
    assert results[1] == (_swap(results[0][0]), *results[0][1:])
    x, w1, w2 = ag.randn(3), ag.randn(3), ag.randn(3)
    expected = x + ag.stack([w1, w2]).max() + ag.cat([-w1, w2]).sum()
    np.testing.assert_allclose(_numpy(gm(x, w1, w2)[0]), _numpy(expected), rtol=1e-6)


def test_pickling_a_graph_module_is_refused_clearly():
    import pickle

    gm = fx.symbolic_trace(_relu_plus_one(ag)())
    with pytest.raises(
        TypeError, match="cannot pickle M: a GraphModule's forward is generated code"
    ):
        pickle.dumps(gm)


def _meta_rows(graph) -> list[list[tuple]]:
    """Per node, (shape, dtype, requires_grad, stride) of each tensor in its value."""
    rows = []
    for n in graph.nodes:
        meta = n.meta["tensor_meta"]
        metas = meta if not hasattr(meta, "shape") else (meta,)
        rows.append(
            [(tuple(m.shape), _swap(str(m.dtype)), m.requires_grad, m.stride) for m in metas]
        )
    return rows


def test_shape_prop_records_torchs_metadata():
    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

    from autogradcli.fx.passes.shape_prop import ShapeProp

    rows = []
    for t, lib, prop in ((torch, torch.fx, TorchShapeProp), (ag, fx, ShapeProp)):
        gm = lib.symbolic_trace(_relu_net(t)())
        x = t.ones(4, 3)
        prop(gm).propagate(x, x[:, :1].expand(4, 3))  # a strided view as the second input
        rows.append(_meta_rows(gm.graph))
    assert rows[1] == rows[0]
    assert rows[1][1] == [((4, 3), "autogradcli.float32", False, (3, 0))]
