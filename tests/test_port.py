"""``agrad port`` and the analysis under it (cli/port_analysis.py, cli/port_table.py): which
torch names a file uses, through every form of import alias, and whether autogradcli has them."""

from __future__ import annotations

import json
import os
import textwrap

from test_cli_helpers import REPO, agrad, write

from autogradcli.cli.port_analysis import source_uses
from autogradcli.cli.port_table import category, present


def names(src: str, path: str = "x.py") -> list[str]:
    return [u.name for u in source_uses(textwrap.dedent(src), path, present)]


def test_aliases_resolve_to_full_paths() -> None:
    src = """
    import torch as th
    import torch.nn as nn
    import torch.nn.functional as F
    from torch import nn as N, optim
    from torch.utils.data import DataLoader as DL
    import torch.utils.data
    th.zeros(2)
    nn.Linear(2, 3)
    F.relu(x)
    N.Conv2d
    optim.SGD(p, lr=0.1)
    DL(ds)
    torch.utils.data.TensorDataset(a)
    """
    found = names(src)
    for name in [
        "torch.nn.Linear",
        "torch.zeros",
        "torch.nn.functional.relu",
        "torch.nn.Conv2d",
        "torch.optim.SGD",
        "torch.utils.data.DataLoader",
        "torch.utils.data.TensorDataset",
        "torch.optim",  # the import itself
    ]:
        assert name in found, name
    assert "torch.nn.functional" in found  # ``import torch.nn.functional as F`` names the module
    assert not any(n.startswith(("th.", "F.", "N.", "DL")) for n in found)


def test_the_longest_chain_is_one_name_with_its_line() -> None:
    uses = source_uses("import torch\n\ny = torch.nn.functional.relu(x)\n", "a.py", present)
    assert [(u.name, u.line) for u in uses] == [("torch.nn.functional.relu", 3)]


def test_method_calls_count_as_tensor_and_module_methods() -> None:
    src = """
    import numpy as np
    import re
    import torch
    x = torch.ones(3)
    x.view(3).sum()
    model.register_buffer("b", x)
    np.array(x).reshape(3)       # numpy's, not counted
    re.compile("a")              # re's, not Module.compile
    "a b".split()                # a str method, never counted
    d.values()
    """
    found = names(src)
    assert found.count("Tensor.view") == 1 and "Tensor.sum" in found
    assert "Module.register_buffer" in found
    assert "Tensor.reshape" not in found and "Module.compile" not in found
    assert "Tensor.split" not in found and "Tensor.values" not in found


def test_star_imports_attribute_free_names() -> None:
    src = """
    from torch import *
    from torch.nn import *
    zeros = None
    def f(a):
        return Linear(2, 3), randn(2), a, len(a), zeros
    """
    found = names(src)
    assert "torch.nn.Linear" in found and "torch.randn" in found
    assert not any(n.endswith((".a", ".len", ".zeros", ".f")) for n in found)


def test_star_import_beside_another_takes_only_confirmed_names() -> None:
    src = "from torch import *\nfrom mylib import *\nrandn(2)\nhelper(3)\n"
    found = names(src)
    assert "torch.randn" in found and "torch.helper" not in found


def test_ipython_notebook_cells_share_aliases_and_report_the_cell(tmp_path) -> None:
    cells = [
        {"cell_type": "markdown", "source": ["import torch.nope\n"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import torch.nn as nn\n"]},
        {"cell_type": "code", "source": "!pip list\nlayer = nn.Linear(2, 2)\nnn.NoSuchLayer\n"},
    ]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    uses = source_uses(path.read_text(), str(path), present)
    assert [(u.name, u.line, u.where) for u in uses] == [
        ("torch.nn", 2, "cell 2"),
        ("torch.nn.Linear", 2, "cell 3"),
        ("torch.nn.NoSuchLayer", 3, "cell 3"),
    ]


def test_present_reads_autogradcli() -> None:
    assert present("torch.nn.Linear") and present("torch.utils.data.DataLoader")
    assert present("Tensor.view") and present("Module.register_buffer")
    assert not present("torch.no_such_name") and not present("Tensor.no_such_method")
    assert not present("torch.nn.NoSuchLayer")
    assert category("torch.nn.functional.relu") == "nn.functional"
    assert category("Tensor.view") == "Tensor methods" and category("torch.zeros") == "torch"


def test_port_exit_0_when_everything_is_available(capsys, tmp_path) -> None:
    script = write(tmp_path / "ok.py", "import torch\nx = torch.zeros(2)\ny = x.view(2)\n")
    code, out, err = agrad(capsys, "port", script)
    assert code == 0, err
    assert "all 2 torch names used are available" in out


def test_port_exit_1_lists_each_missing_name_with_file_and_line(
    capsys, tmp_path, monkeypatch
) -> None:
    write(
        tmp_path / "p.py",
        """
        import torch
        import torch.nn as nn
        a = torch.no_such_fn(1)
        b = nn.NoSuchLayer(2)
        c = torch.no_such_fn(3)
        """,
    )
    code, out, _ = agrad(capsys, "port", str(tmp_path), "--json")
    assert code == 1
    report = json.loads(out)
    assert report["files"] == 1 and report["names"] == 3  # torch.nn, and the two missing
    missing = {row["name"]: [u["line"] for u in row["uses"]] for row in report["missing"]}
    assert missing == {"torch.no_such_fn": [3, 5], "torch.nn.NoSuchLayer": [4]}
    monkeypatch.chdir(tmp_path)
    code, out, _ = agrad(capsys, "port", "p.py")
    assert code == 1
    assert "p.py:3,5" in out and "p.py:4" in out
    assert "2 of the 3 torch names used are missing" in out


def test_port_exit_2_for_a_bad_path_or_a_syntax_error_at_file_line(capsys, tmp_path) -> None:
    code, _, err = agrad(capsys, "port", str(tmp_path / "absent.py"))
    assert code == 2 and "absent.py" in err and "Traceback" not in err
    bad = write(tmp_path / "bad.py", "import torch\nx = (\n")
    code, _, err = agrad(capsys, "port", bad)
    assert code == 2 and f"{bad}:2:" in err and "Traceback" not in err


def test_port_on_the_programs_corpus_finds_no_missing_names(capsys) -> None:
    folder = os.path.join(REPO, "tests", "programs")
    code, out, _ = agrad(capsys, "port", folder, "--json")
    report = json.loads(out)
    assert report["files"] >= 40 and report["names"] > 100
    assert report["missing"] == [] and code == 0


def test_port_lists_what_works_as_without_the_feature_and_alternatives(capsys, tmp_path) -> None:
    only = write(tmp_path / "c.py", "import torch\nm = torch.compile(torch.nn.Linear(2, 2))\n")
    code, out, _ = agrad(capsys, "port", only, "--json")
    report = json.loads(out)
    assert code == 0 and report["missing"] == []
    assert [r["name"] for r in report["partial"]] == ["torch.compile"]
    assert "nothing is compiled" in report["partial"][0]["reason"]
    both = write(tmp_path / "j.py", "import torch\nm = torch.jit.load('m.pt')\ntorch.npu.init()\n")
    code, out, _ = agrad(capsys, "port", both, "--json")
    report = json.loads(out)
    (partial,) = report["partial"]  # our own module files only: TorchScript archives refused
    assert partial["name"] == "torch.jit.load" and "load_state_dict" in partial["instead"]
    (row,) = report["missing"]
    assert code == 1 and row["name"] == "torch.npu.init" and row["uses"][0]["line"] == 3


def test_port_exit_2_names_a_notebook_cell_python_cannot_parse(capsys, tmp_path) -> None:
    cells = [
        {"cell_type": "code", "source": "import torch\n"},
        {"cell_type": "code", "source": "x = (\n"},
    ]
    nb = tmp_path / "bad.ipynb"
    nb.write_text(json.dumps({"cells": cells}))
    code, _, err = agrad(capsys, "port", str(nb))
    assert code == 2 and f"{nb}:1:" in err and "(cell 2)" in err
    nb.write_text("{not json")
    code, _, err = agrad(capsys, "port", str(nb))
    assert code == 2 and "not a readable notebook" in err


def test_an_alias_the_file_rebinds_counts_only_confirmed_names() -> None:
    src = """
    from torch.utils import data
    loader = data.DataLoader(ds)
    data = load_table()
    print(data.shape, data.no_such_loader)
    """
    found = names(src)
    assert "torch.utils.data.DataLoader" in found
    assert not any(n.endswith((".shape", ".no_such_loader")) for n in found)
