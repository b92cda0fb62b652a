"""tools/api_usage: count.py's per-name files/repos/uses and report.py's coverage figures on a
two-repository corpus whose numbers are worked out by hand."""

from __future__ import annotations

import importlib.util
import json
import os

from test_cli_helpers import REPO, write


def _tool(name: str):
    path = os.path.join(REPO, "tools", "api_usage", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"api_usage_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_count_and_coverage_on_a_hand_checked_corpus(tmp_path, capsys) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    write(a / "one.py", "import torch\nx = torch.zeros(2)\ny = torch.zeros(3)\n")
    write(a / "two.py", "import torch\nz = torch.no_such_fn(1)\n")
    write(b / "three.py", "import torch.nn as nn\nm = nn.Linear(1, 1)\nw = torch_free = 1\n")
    write(b / "broken.py", "import torch\nx = (\n")
    write(b / "plain.py", "print('no torch here')\n")
    data = _tool("count").count([str(a), str(b)])
    rows = {r["name"]: (r["files"], r["repos"], r["uses"], r["present"]) for r in data["names"]}
    assert rows == {
        "torch.zeros": (1, 1, 2, True),
        "torch.no_such_fn": (1, 1, 1, False),
        "torch.nn": (1, 1, 1, True),
        "torch.nn.Linear": (1, 1, 1, True),
    }
    assert data["skipped"] == ["b/broken.py"] and len(data["files"]) == 3
    report = _tool("report")
    table = report.coverage(data)
    uses, uses_ok, files, files_ok, names, names_ok = table["all"]
    assert (uses, uses_ok, files, files_ok, names, names_ok) == (5, 4, 3, 2, 4, 3)
    path = tmp_path / "counts.json"
    path.write_text(json.dumps(data))
    assert report.main([str(path), "--wanted"]) == 0
    out = capsys.readouterr().out
    assert "80.0% of uses" in out and "66.7% of files" in out
    assert "missing names (0)" in out  # one file in one repo: below the >= 2 repos / 3 files bar
