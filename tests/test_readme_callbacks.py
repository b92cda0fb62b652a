"""The README's callback table names every event of trainer.Callback, in the loop's order,
with the exact arguments of its signature (a renamed or added event fails here)."""

from __future__ import annotations

import inspect
import os
import re

from autogradcli.trainer import EVENTS, Callback

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def test_readme_callback_table_matches_the_callback_class():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    rows = re.findall(r"^\| `(on_\w+)\(([^)]*)\)` \|", text, flags=re.M)
    assert [name for name, _ in rows] == list(EVENTS)
    for name, args in rows:
        params = list(inspect.signature(getattr(Callback, name)).parameters)
        assert params[0] == "self"
        assert [a.strip() for a in args.split(",")] == params[1:], name
