"""Which torch names a Python file (or notebook) uses, read with ``ast``: imports and their
aliases resolved to full dotted paths (``F.relu`` -> ``torch.nn.functional.relu``), and
method calls ``.x(...)`` whose name is a torch.Tensor / nn.Module method (``Tensor.x``)."""

from __future__ import annotations

import ast
import builtins
import json
from dataclasses import dataclass
from typing import Any

from .port_methods import MODULE_METHODS, TENSOR_METHODS

__all__ = ["PortSyntaxError", "Use", "file_uses", "source_uses"]

ROOTS = {"torch": "torch", "autogradcli": "torch"}  # an already-ported script reads the same
# Method names that are also methods of str/list/dict/set/tuple/int/float/bytes: ``.split(``,
# ``.sort(``, ``.index(``, ``.values(`` are more often Python's than torch's, so not counted.
_PY_METHODS = frozenset().union(
    *(dir(t) for t in (str, list, dict, set, frozenset, tuple, int, float, complex, bytes))
)
COUNTED_TENSOR = TENSOR_METHODS - _PY_METHODS
COUNTED_MODULE = MODULE_METHODS - _PY_METHODS - TENSOR_METHODS
_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "get_ipython"}


@dataclass(frozen=True)
class Use:
    """One use of a torch name: ``name`` (``torch.nn.Linear``, ``Tensor.view``) at file:line."""

    name: str
    path: str
    line: int
    where: str = ""  # a notebook's cell ("cell 3"), empty for a .py file


class PortSyntaxError(Exception):
    """A file that Python cannot parse: the message names file:line."""


def _canonical(module: str) -> str | None:
    head, _, rest = module.partition(".")
    root = ROOTS.get(head)
    if root is None:
        return None
    return f"{root}.{rest}" if rest else root


class _Imports(ast.NodeVisitor):
    """The file's torch aliases (name -> dotted path), star imports, and the imports' own uses."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.stars: list[str] = []
        self.other_star = False
        self.others: set[str] = set()  # names bound by other imports: np, math, re, Image
        self.uses: list[tuple[str, int]] = []

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            full = _canonical(alias.name)
            if full is None:
                self.others.add(alias.asname or alias.name.split(".")[0])
                continue
            if full != "torch":
                self.uses.append((full, node.lineno))
            if alias.asname:
                self.aliases[alias.asname] = full
            else:  # ``import torch.nn`` binds ``torch``
                self.aliases[alias.name.split(".")[0]] = "torch"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        full = _canonical(node.module or "") if not node.level else None
        if full is None:
            self.other_star |= any(a.name == "*" for a in node.names)
            self.others.update(a.asname or a.name for a in node.names if a.name != "*")
            return
        for alias in node.names:
            if alias.name == "*":
                self.stars.append(full)
                continue
            path = f"{full}.{alias.name}"
            self.uses.append((path, node.lineno))
            self.aliases[alias.asname or alias.name] = path


def _chain(node: ast.expr) -> tuple[str, list[str]] | None:
    """``a.b.c`` as ("a", ["b", "c"]); None when the chain does not start at a name."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, attrs[::-1]
    return None


def _receiver_root(node: ast.expr) -> str | None:
    """The name a receiver starts from, through attributes, calls and subscripts:
    ``np.array(x).mean`` -> ``np``."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound_names(tree: ast.AST, imports: bool = True) -> set[str]:
    """Every name the file binds itself (assignments, defs, arguments, loop targets, and with
    ``imports`` its imports)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias) and imports:
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


class _Uses(ast.NodeVisitor):
    """Walks a tree and records each torch name it reads (the longest resolved chain)."""

    def __init__(
        self, imports: _Imports, star_names: dict[str, str], rebound: set[str], present: Any
    ) -> None:
        self.imports = imports
        self.star_names = star_names  # free name -> the star-imported module it comes from
        self.rebound = rebound  # aliases the file also assigns (``data = load(...)``)
        self.present = present
        self.uses: list[tuple[str, int]] = []

    def _resolve(self, node: ast.expr) -> str | None:
        found = _chain(node)
        if found is None:
            return None
        root, attrs = found
        base = self.imports.aliases.get(root)
        if base is None and root in self.star_names:
            base = f"{self.star_names[root]}.{root}"
        if base is None:
            return None
        full = ".".join([base, *attrs])
        if root in self.rebound and self.present is not None and not self.present(full):
            return None  # most likely the other binding's attribute (``data.shape``)
        return full

    def visit_Attribute(self, node: ast.Attribute) -> None:
        full = self._resolve(node)
        if full is not None:
            self.uses.append((full, node.lineno))
            return  # the chain's inner attributes are part of this one name
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            full = self._resolve(node)
            if full is not None and full != "torch" and "." in full:
                self.uses.append((full, node.lineno))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and self._resolve(func) is None
            and _receiver_root(func.value) not in self.imports.others
        ):
            if func.attr in COUNTED_TENSOR:
                self.uses.append((f"Tensor.{func.attr}", func.lineno))
            elif func.attr in COUNTED_MODULE:
                self.uses.append((f"Module.{func.attr}", func.lineno))
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        pass  # recorded by _Imports

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        pass


def _star_names(tree: ast.AST, imports: _Imports, present: object) -> dict[str, str]:
    """Free names of a file with ``from torch... import *``, each mapped to its star module.

    With another (non-torch) star import too, a free name may be that module's: only names
    ``present(module + "." + name)`` confirms are taken then."""
    if not imports.stars:
        return {}
    free = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    free -= _bound_names(tree) | _BUILTINS
    out: dict[str, str] = {}
    for name in sorted(free):
        owners = [m for m in imports.stars if present is not None and present(f"{m}.{name}")]
        if owners:
            out[name] = owners[0]
        elif not imports.other_star:
            out[name] = imports.stars[0]
    return out


def _tree_uses(trees: list[ast.AST], present: object) -> list[tuple[int, str, int]]:
    """(tree index, name, line) for every torch use in ``trees`` (one file's parts, in order)."""
    imports = _Imports()
    for tree in trees:
        imports.visit(tree)
    whole = ast.Module(body=[s for t in trees for s in t.body], type_ignores=[])  # type: ignore[attr-defined]
    star = _star_names(whole, imports, present)
    rebound = _bound_names(whole, imports=False) & set(imports.aliases)
    out: list[tuple[int, str, int]] = []
    for i, tree in enumerate(trees):
        own = _Imports()
        own.visit(tree)
        out += [(i, name, line) for name, line in own.uses]
        visitor = _Uses(imports, star, rebound, present)
        visitor.visit(tree)
        out += [(i, name, line) for name, line in visitor.uses]
    return out


def _parse(source: str, path: str, where: str = "") -> ast.Module:
    try:
        return ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as err:
        line = getattr(err, "lineno", None) or 0
        col = getattr(err, "offset", None) or 0
        cell = f" ({where})" if where else ""
        msg = getattr(err, "msg", str(err))
        raise PortSyntaxError(f"{path}:{line}:{col}{cell}: syntax error: {msg}") from None


def _notebook_cells(text: str, path: str) -> list[str]:
    """The code cells of an .ipynb, IPython magics (``%``, ``!``) blanked (lines kept)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError) as err:
        raise PortSyntaxError(f"{path}:1:1: not a readable notebook: {err}") from None
    out = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            out.append("")
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        lines = [
            "" if line.lstrip().startswith(("%", "!", "?")) else line for line in src.splitlines()
        ]
        out.append("\n".join(lines))
    return out


def source_uses(
    text: str, path: str, present: object = None, skip_bad_cells: bool = False
) -> list[Use]:
    """Every torch use in one file's text (.py source, or .ipynb JSON when ``path`` says so).

    ``present(name)`` helps attribute the free names of a star import; a file Python cannot
    parse raises PortSyntaxError (a notebook's bad cell is skipped with ``skip_bad_cells``)."""
    if path.endswith(".ipynb"):
        cells = _notebook_cells(text, path)
        trees: list[ast.AST] = []
        wheres: list[str] = []
        for number, src in enumerate(cells, start=1):
            if not src.strip():
                continue
            try:
                trees.append(_parse(src, path, f"cell {number}"))
            except PortSyntaxError:
                if skip_bad_cells:
                    continue
                raise
            wheres.append(f"cell {number}")
    else:
        trees, wheres = [_parse(text, path)], [""]
    found = _tree_uses(trees, present)
    return [Use(name, path, line, wheres[i]) for i, name, line in sorted(found, key=_order)]


def _order(item: tuple[int, str, int]) -> tuple[int, int, str]:
    return item[0], item[2], item[1]


def file_uses(path: str, present: object = None, skip_bad_cells: bool = False) -> list[Use]:
    """Every torch use in the file at ``path`` (see ``source_uses``)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return source_uses(text, path, present, skip_bad_cells)
