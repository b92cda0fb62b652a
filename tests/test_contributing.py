"""CONTRIBUTING.md's worked examples are the project's real code, so they cannot drift from it."""

from __future__ import annotations

import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _section(title: str) -> str:
    """The text of CONTRIBUTING.md's ``## title`` section."""
    with open(os.path.join(REPO, "CONTRIBUTING.md"), encoding="utf-8") as fh:
        text = fh.read()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _code_lines(code: str) -> list[str]:
    """``code``'s lines with end-of-line comments and trailing blanks removed."""
    return [re.sub(r"\s+# .*$", "", line).rstrip() for line in code.split("\n")]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack)))


def test_adding_an_op_shows_the_real_logexp_module():
    blocks = re.findall(r"```python\n(.*?)```", _section("Adding an op"), re.S)
    with open(os.path.join(REPO, "autogradcli", "ops", "logexp.py"), encoding="utf-8") as fh:
        source = _code_lines(fh.read())
    assert len(blocks) == 2
    for block in blocks:
        lines = _code_lines(block.rstrip("\n"))
        assert _contains(source, lines), f"not in ops/logexp.py:\n{block}"


def test_adding_an_op_names_modules_that_exist():
    section = _section("Adding an op")
    for name in re.findall(r"`ops/(\w+)\.py`", section):
        assert os.path.exists(os.path.join(REPO, "autogradcli", "ops", f"{name}.py")), name
    from autogradcli.ops import logexp, unary

    assert "log1p" in logexp.__all__ and not hasattr(unary, "__all__")
