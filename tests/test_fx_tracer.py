"""autogradcli.fx's wrap and custom Tracers against torch.fx: wrapped free functions stay one
call_function node, ``is_leaf_module``/``call_module``/``create_proxy`` overrides."""

from __future__ import annotations

import importlib.util

import numpy as np
from lazy_torch import torch

import autogradcli as ag
import autogradcli.fx as fx
from autogradcli import cat as joined  # a name bound before tracing, in forward's module


def scaled(x, k):
    return x * k


@fx.wrap
def shifted(x):
    return x + int(x.shape[0])  # needs a real value: traced, it would fail


fx.wrap("scaled")
fx.wrap("len")
if importlib.util.find_spec("torch") is not None:
    torch.fx.wrap("scaled")
    torch.fx.wrap("shifted")
    torch.fx.wrap("len")


def _uses_wrapped(x):
    return shifted(scaled(x, 2)) + len(x)


def _swap(text: str) -> str:
    return text.replace("torch.", "autogradcli.")


def test_wrapped_functions_are_single_nodes_like_torch():
    theirs = torch.fx.symbolic_trace(_uses_wrapped)
    gm = fx.symbolic_trace(_uses_wrapped)
    assert str(gm.graph) == _swap(str(theirs.graph))
    assert gm.code == _swap(theirs.code)
    assert [n.target for n in gm.graph.nodes][1:4] == [scaled, shifted, len]
    assert gm(ag.ones(3)).tolist() == [8.0, 8.0, 8.0]
    assert fx.symbolic_trace(gm).code == gm.code  # the generated code wraps them again
    assert scaled.__name__ == "scaled" and globals()["scaled"] is scaled  # put back


def _two_blocks(t):
    class Block(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = t.nn.Linear(3, 3)
            self.act = t.nn.ReLU()

        def forward(self, x):
            return self.act(self.lin(x)) * 2

    class Net(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = t.nn.Sequential(Block(), Block())

        def forward(self, x):
            return self.blocks(x).sum(1)

    return Net, Block


def _nodes(graph) -> list[tuple[str, str, str]]:
    def target(n):
        return n.target if isinstance(n.target, str) else n.target.__name__

    return [(n.op, n.name, target(n), repr(n.kwargs)) for n in graph.nodes]


def _custom_tracers(lib, t, block):
    class LowerRelu(lib.Tracer):
        def is_leaf_module(self, m, qualname):
            return False if isinstance(m, t.nn.ReLU) else super().is_leaf_module(m, qualname)

    class BlockLeaf(lib.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, block) or super().is_leaf_module(m, qualname)

    class ModulePath(lib.Tracer):
        current = ""

        def __init__(self):
            super().__init__()
            self.origin = {}

        def call_module(self, m, forward, args, kwargs):
            old, self.current = self.current, self.path_of_module(m)
            try:
                return super().call_module(m, forward, args, kwargs)
            finally:
                self.current = old

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
            proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
            self.origin[proxy.node.name] = self.current
            return proxy

    return LowerRelu(), BlockLeaf(), ModulePath()


def test_custom_tracers_like_torch():
    results = []
    for t, lib in ((torch, torch.fx), (ag, fx)):
        net, block = _two_blocks(t)
        tracers = _custom_tracers(lib, t, block)
        results.append([_nodes(tr.trace(net())) for tr in tracers] + [tracers[2].origin])
    assert results[1] == results[0]
    lower, leaf = results[1][:2]
    assert ("call_function", "relu", "relu", "{'inplace': False}") in lower
    assert [n[2] for n in leaf if n[0] == "call_module"] == ["blocks.0", "blocks.1"]
    assert results[1][3]["blocks_1_lin"] == "blocks.1.lin"


def test_custom_tracer_graph_runs_in_a_graph_module():
    net, block = _two_blocks(ag)
    model = net()
    tracer = _custom_tracers(fx, ag, block)[0]
    graph = tracer.trace(model)
    gm = fx.GraphModule(tracer.root, graph, "Net")
    x = ag.randn(2, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
    assert sorted(gm.state_dict()) == sorted(model.state_dict())


def clamp_len(x, n):
    return x[: min(n, int(x.shape[0]))]  # needs real values: a leaf through autowrap_functions


def _imported_names(x):
    return clamp_len(joined([x, x]), 3).sum()


def _autowrapped(t):
    def f(x):
        return clamp_len(t.cat([x, x]), 3).sum()

    return f


def test_autowrap_functions_like_torch():
    ops = []
    for t, lib in ((torch, torch.fx), (ag, fx)):
        graph = lib.Tracer(autowrap_functions=(clamp_len,)).trace(_autowrapped(t))
        ops.append([(n.op, getattr(n.target, "__name__", n.target)) for n in graph.nodes])
    assert ops[1] == ops[0]
    assert ops[1][1:4] == [
        ("call_function", "cat"),
        ("call_function", "clamp_len"),
        ("call_method", "sum"),
    ]


def test_names_imported_before_tracing_are_recorded():
    graph = fx.Tracer(autowrap_functions=(clamp_len,)).trace(_imported_names)
    assert [n.target for n in graph.nodes][1:3] == [ag.cat, clamp_len]
    assert joined is ag.cat  # the patched global is put back
    gm = fx.GraphModule(ag.nn.Module(), graph)
    assert gm(ag.ones(2)).item() == 3.0
