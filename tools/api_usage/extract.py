"""Copy the .py and .ipynb files of bare git repositories (the ``fetch`` tool's mirrors) into
plain folders for count.py; d2l-style Markdown chapters become notebooks of their pytorch cells.

    python tools/api_usage/extract.py /path/to/mirrors /tmp/api_corpus

Each ``MIRRORS/<owner>+<name>/repo`` git directory becomes ``OUT/<owner>+<name>/``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys

_BLOCK = re.compile(r"```\{\.python \.input[^}]*\}\n(.*?)```", re.S)


def _git(gitdir: str, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], capture_output=True).stdout


class _PytorchBranches(ast.NodeTransformer):
    """Drops d2l's ``if tab.selected('mxnet', ...):`` branches that are not pytorch's."""

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        test = node.test
        if (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Attribute)
            and test.func.attr == "selected"
        ):
            tabs = {a.value for a in test.args if isinstance(a, ast.Constant)}
            if "pytorch" in tabs:
                return node.body
            return node.orelse or [ast.Pass()]
        return node


def _pytorch_only(source: str) -> str:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    return ast.unparse(ast.fix_missing_locations(_PytorchBranches().visit(tree)))


def md_notebook(text: str) -> str | None:
    """The pytorch (or all-framework) code cells of a d2l chapter as notebook JSON."""
    cells = []
    for block in _BLOCK.findall(text):
        first, _, body = block.partition("\n")
        tab = first.strip()
        if not tab.startswith("%%tab"):
            continue
        if "pytorch" not in tab and tab != "%%tab all":
            continue
        cells.append({"cell_type": "code", "source": _pytorch_only(body)})
    return json.dumps({"cells": cells}) if cells else None


def extract(gitdir: str, out: str) -> int:
    """Write the repository's Python sources under ``out``; return how many files."""
    listing = _git(gitdir, "ls-tree", "-r", "-z", "HEAD").decode("utf-8", "replace")
    count = 0
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        if "ipynb_checkpoints" in path or not path.endswith((".py", ".ipynb", ".md")):
            continue
        blob = _git(gitdir, "cat-file", "blob", meta.split()[2])
        if path.endswith(".md"):
            text = md_notebook(blob.decode("utf-8", "replace"))
            if text is None:
                continue
            blob, path = text.encode(), path[:-3] + ".md.ipynb"
        if not blob:
            continue
        dst = os.path.join(out, path)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(blob)
        count += 1
    return count


def main() -> int:
    """Extract every mirror under argv[1] into argv[2]."""
    mirrors, out = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(mirrors)):
        gitdir = os.path.join(mirrors, name, "repo")
        if os.path.isdir(gitdir):
            print(name, extract(gitdir, os.path.join(out, name)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
