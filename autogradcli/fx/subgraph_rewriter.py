"""``torch.fx.replace_pattern``: find every non-overlapping copy of a traced pattern function in
a GraphModule's graph and swap it for a traced replacement function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_arg
from .tracer import symbolic_trace

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """A replaced match: the graph node the pattern's output matched, and pattern -> graph nodes."""

    anchor: Node
    nodes_map: dict[Node, Node]


def _same_args(p: Any, g: Any, mapping: dict[Node, Node]) -> bool:
    if isinstance(p, Node):
        return isinstance(g, Node) and _match(p, g, mapping)
    if isinstance(p, (list, tuple)):
        return (
            type(p) is type(g)
            and len(p) == len(g)
            and all(_same_args(a, b, mapping) for a, b in zip(p, g))
        )
    if isinstance(p, dict):
        return (
            isinstance(g, dict)
            and p.keys() == g.keys()
            and all(_same_args(p[k], g[k], mapping) for k in p)
        )
    return not isinstance(g, Node) and type(p) is type(g) and p == g


def _match(p: Node, g: Node, mapping: dict[Node, Node]) -> bool:
    if p in mapping:
        return mapping[p] is g
    if p.op == "placeholder":
        mapping[p] = g
        return True
    if p.op != g.op or p.target != g.target:
        return False
    mapping[p] = g
    return _same_args(p.args, g.args, mapping) and _same_args(p.kwargs, g.kwargs, mapping)


def _graph_of(fn: Callable[..., Any] | Graph) -> Graph:
    return fn if isinstance(fn, Graph) else symbolic_trace(fn).graph


def replace_pattern(
    gm: GraphModule, pattern: Callable[..., Any] | Graph, replacement: Callable[..., Any] | Graph
) -> list[Match]:
    """Replace each match of ``pattern`` (whose inner values nothing else uses) with
    ``replacement``, its inputs bound in order; the matches, after ``gm.recompile()``."""
    pat, rep = _graph_of(pattern), _graph_of(replacement)
    pat_inputs = [n for n in pat.nodes if n.op == "placeholder"]
    (pat_out,) = [n for n in pat.nodes if n.op == "output"]
    anchor = pat_out.args[0]
    if not isinstance(anchor, Node):
        raise ValueError("replace_pattern: the pattern must return one traced value")
    taken: set[Node] = set()
    matches: list[Match] = []
    for node in list(gm.graph.nodes):
        mapping: dict[Node, Node] = {}
        if node in taken or not _match(anchor, node, mapping):
            continue
        inner = {g for p, g in mapping.items() if p.op != "placeholder"}
        if inner & taken or any(u not in inner for g in inner - {node} for u in g.users):
            continue
        taken |= inner
        matches.append(Match(node, mapping))
    for m in matches:
        _substitute(gm.graph, rep, [m.nodes_map[p] for p in pat_inputs], m)
    gm.recompile()
    return matches


def _substitute(graph: Graph, rep: Graph, inputs: list[Node], m: Match) -> None:
    val_map: dict[Node, Any] = {}
    placeholders = iter(inputs)
    result: Any = None
    order = {n: i for i, n in enumerate(graph.nodes)}
    first_user = min(m.anchor.users, key=order.__getitem__, default=m.anchor)
    with graph.inserting_before(first_user):  # as torch: just before the result is first used
        for rn in rep.nodes:
            if rn.op == "placeholder":
                val_map[rn] = next(placeholders)
            elif rn.op == "output":
                result = map_arg(rn.args[0], lambda n: val_map[n])
            else:
                val_map[rn] = graph.node_copy(rn, lambda n: val_map[n])
    m.anchor.replace_all_uses_with(result)
    inner = [g for p, g in m.nodes_map.items() if p.op != "placeholder"]
    for g in sorted(inner, key=order.__getitem__, reverse=True):
        graph.erase_node(g)
