"""``torch.utils._pytree``: flatten nested lists, tuples, namedtuples and dicts to their leaves and
back (every other object, None included, is a leaf), as PyTorch's pytree does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "TreeSpec",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
]


@dataclass(frozen=True)
class TreeSpec:
    """The shape of a tree: its node type, the node's context (dict keys, namedtuple class)
    and the children's specs; a leaf's spec has type None."""

    type: Any
    context: Any = None
    children: tuple[TreeSpec, ...] = field(default_factory=tuple)

    @property
    def num_leaves(self) -> int:
        """How many leaves the tree has."""
        return 1 if self.type is None else sum(c.num_leaves for c in self.children)


_LEAF = TreeSpec(None)


def _children(node: Any) -> tuple[Any, Any, list[Any]] | None:
    """(type, context, children) of a container node, None for a leaf."""
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        return type(node), type(node), list(node)
    if type(node) in (list, tuple):
        return type(node), None, list(node)
    if isinstance(node, dict):
        return type(node), list(node), list(node.values())
    return None


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves, depth first, and the spec ``tree_unflatten`` rebuilds the tree from."""
    found = _children(tree)
    if found is None:
        return [tree], _LEAF
    kind, context, kids = found
    leaves: list[Any] = []
    specs = []
    for kid in kids:
        sub, spec = tree_flatten(kid)
        leaves += sub
        specs.append(spec)
    return leaves, TreeSpec(kind, context, tuple(specs))


def tree_unflatten(leaves: Any, spec: TreeSpec) -> Any:
    """The tree of ``spec`` with ``leaves`` in place of its leaves."""
    values = list(leaves)
    if len(values) != spec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(values)} but the spec refers "
            f"to a pytree that holds {spec.num_leaves} items ({spec})."
        )
    it = iter(values)
    return _build(spec, it)


def _build(spec: TreeSpec, it: Any) -> Any:
    if spec.type is None:
        return next(it)
    kids = [_build(c, it) for c in spec.children]
    if spec.type in (list, tuple):
        return spec.type(kids)
    if isinstance(spec.context, type):  # a namedtuple
        return spec.context(*kids)
    return spec.type(zip(spec.context, kids))


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves, depth first."""
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> TreeSpec:
    """The tree's spec."""
    return tree_flatten(tree)[1]


def tree_map(fn: Callable[..., Any], tree: Any, *rests: Any) -> Any:
    """The same tree with ``fn`` applied to each leaf (leaf-wise over ``rests`` too)."""
    leaves, spec = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rests]
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others)], spec)
