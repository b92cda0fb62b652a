"""agrad gradcheck: each class of wrong backward is caught and named; correct ones pass."""

from __future__ import annotations

import json

import pytest
from test_cli_helpers import FUNCS, FUNCTION_CONFIG, agrad, agrad_subprocess, write


@pytest.fixture
def funcs(tmp_path, monkeypatch):
    write(tmp_path / "funcs.py", FUNCS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def gc_json(capsys, *argv):
    code, out, err = agrad(capsys, "gradcheck", *argv, "--json")
    return code, json.loads(out), err


def failing(doc):
    return [p for f in doc["functions"] for p in f["pairs"] if not p["ok"]]


@pytest.mark.parametrize(
    "target, inputs, bad_input, words",
    [
        ("MulSign", ["x=3", "w=3"], "x", "sign flipped"),
        ("Square2", ["x=5"], "x", "constant factor: analytical ≈ 2 * numerical"),
        ("MatMulT", ["x=2,3", "w=3,3"], "w", "transposed"),
        ("MulMissing", ["x=3", "w=3"], "w", "gradient missing for w"),
        ("AddBias", ["x=4,3", "b=3"], "b", "not summed over a broadcast dimension"),
    ],
)
def test_wrong_backward_is_diagnosed(capsys, funcs, target, inputs, bad_input, words):
    args = [a for spec in inputs for a in ("--input", spec)]
    code, doc, _ = gc_json(capsys, f"funcs.py:{target}", *args)
    assert code == 1
    assert doc["ok"] is False
    bad = failing(doc)
    assert [p["input"] for p in bad] == [bad_input]
    assert words in bad[0]["diagnosis"]
    worst = bad[0]["worst"][0]
    assert worst["where"].startswith("y") and f" w.r.t. {bad_input}" in worst["where"]
    assert worst["difference"] > worst["allowed"]


def test_failure_report_shows_worst_elements_and_diagnosis(capsys, funcs):
    code, out, _ = agrad(capsys, "gradcheck", "funcs.py:AddBias", "-i", "x=4,3", "-i", "b=3")
    assert code == 1
    assert "FAIL  Jacobian matches finite differences" in out
    assert "y[1, 0] w.r.t. b[0]" in out
    assert "diagnosis: not summed over a broadcast dimension" in out
    assert "numerical" in out and "analytical" in out and "allowed" in out
    assert "gradcheck FAILED" in out


def test_transposed_non_square_caught_by_the_shape_check(capsys, funcs):
    code, doc, _ = gc_json(capsys, "funcs.py:MatMulT", "-i", "x=2,3", "-i", "w=3,4")
    assert code == 1
    first = doc["functions"][0]["checks"][0]
    assert first["status"] == "fail" and "transposed" in first["detail"]


def test_mean_instead_of_sum_over_broadcast(capsys, funcs, tmp_path):
    (tmp_path / "more.py").write_text(
        "from autogradcli.autograd import Function\n"
        "class MeanBias(Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, b):\n"
        "        return x + b\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g, g.mean(0)\n"
    )
    code, doc, _ = gc_json(capsys, "more.py:MeanBias", "-i", "x=4,3", "-i", "b=3")
    assert code == 1
    assert "averaged over dim 0" in failing(doc)[0]["diagnosis"]


@pytest.mark.parametrize(
    "argv",
    [
        ["funcs.py:Mul", "-i", "x=3,2", "-i", "w=3,2"],
        ["funcs.py:Log", "-i", "x=4", "--domain", "x=positive"],
        ["funcs.py:Scale", "-i", "x=3", "--arg", "alpha=0.5"],
        ["funcs.py:Cube"],
        ["funcs.py:Linear", "-i", "x=3,4", "-i", "weight=2,4", "-i", "bias=2"],
    ],
)
def test_correct_backward_passes(capsys, funcs, argv):
    code, out, err = agrad(capsys, "gradcheck", *argv)
    assert code == 0, out + err
    assert "all checks passed" in out
    assert "FAIL" not in out


def test_relu_at_zero_is_a_kink_not_a_failure(capsys, funcs):
    code, doc, _ = gc_json(capsys, "funcs.py:Relu")
    assert code == 0
    pair = doc["functions"][0]["pairs"][0]
    assert pair["ok"] and pair["n_kinks"] == 2
    assert {k["where"] for k in pair["kinks"]} == {
        "y[0, 1] w.r.t. x[0, 1]",
        "y[1, 0] w.r.t. x[1, 0]",
    }
    assert pair["kinks"][0]["left"] == pytest.approx(0.0) and pair["kinks"][0][
        "right"
    ] == pytest.approx(1.0)
    code, out, _ = agrad(capsys, "gradcheck", "funcs.py:Relu")
    assert "2 kink(s)" in out and "left slope 0, right slope 1" in out


def test_order_2(capsys, funcs):
    code, doc, _ = gc_json(capsys, "funcs.py:Cube", "--order", "2")
    assert code == 0
    second = [p for p in doc["functions"][0]["pairs"] if p["order"] == 2]
    assert {(p["output"], p["input"]) for p in second} == {("grad_x", "x"), ("grad_x", "grad_y")}
    code, doc, _ = gc_json(capsys, "funcs.py:CubeBadSecond", "-i", "x=3", "--order", "2")
    assert code == 1
    checks = {c["name"]: c["status"] for c in doc["functions"][0]["checks"]}
    assert checks["Jacobian matches finite differences"] == "pass"
    assert checks["second-order gradients match (gradgradcheck)"] == "fail"


def test_fast_mode_passes_and_locates_failures(capsys, funcs):
    code, doc, _ = gc_json(capsys, "funcs.py:Mul", "-i", "x=20,20", "-i", "w=20", "--fast")
    assert code == 0
    assert all(p.get("mode") == "fast" for p in doc["functions"][0]["pairs"])
    code, doc, _ = gc_json(capsys, "funcs.py:MulSign", "-i", "x=6", "-i", "w=6", "--fast")
    assert code == 1
    bad = failing(doc)
    assert bad[0]["input"] == "x" and "sign flipped" in bad[0]["diagnosis"]


def test_tolerance_flags(capsys, funcs):
    code, _, _ = agrad(
        capsys, "gradcheck", "funcs.py:Square2", "-i", "x=3", "--rtol", "2", "--atol", "10"
    )
    assert code == 0


def test_config_target_checks_function_layers(capsys, funcs, tmp_path):
    write(tmp_path / "funcs.py", FUNCS)
    cfg = write(tmp_path / "good.yaml", FUNCTION_CONFIG.format(name="Linear"))
    code, doc, _ = gc_json(capsys, cfg)
    assert code == 0, doc
    (fn,) = doc["functions"]
    assert fn["layer"] == "0"
    assert [i["name"] for i in fn["inputs"]] == ["x", "weight", "bias"]
    assert fn["inputs"][1]["shape"] == [4, 1]
    bad = write(tmp_path / "bad.yaml", FUNCTION_CONFIG.format(name="LinearNoBiasSum"))
    code, doc, _ = gc_json(capsys, bad)
    assert code == 1
    assert [p["input"] for p in failing(doc)] == ["bias"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["funcs.py:Nope", "-i", "x=3"], "has no 'Nope'"),
        (["missing_file.py:F"], "not found"),
        (["no_such_module_xyz:F"], "module 'no_such_module_xyz' not found"),
        (["funcs.py:FUNCS_NOT_A_CLASS"], "has no"),
        (["justaname"], "not a target"),
        (["funcs.py:Mul", "-i", "x=3,a", "-i", "w=3"], "comma-separated"),
        (["funcs.py:Mul", "-i", "z=3"], "forward has no parameter 'z'"),
        (["funcs.py:Mul", "-i", "x=3"], "no value for w"),
        (["funcs.py:Mul"], "declares no example_inputs"),
        (["funcs.py:Log", "-i", "x=3", "--domain", "x=huge"], "the domain is one of"),
        (["funcs.py:ag"], "not an autograd.Function"),
    ],
)
def test_usage_and_import_errors_exit_2(capsys, funcs, argv, words):
    code, out, err = agrad(capsys, "gradcheck", *argv)
    assert code == 2, out + err
    assert words in err
    assert "Traceback" not in err + out


def test_debug_shows_traceback(capsys, funcs):
    code, _, err = agrad(capsys, "--debug", "gradcheck", "funcs.py:Nope")
    assert code == 2 and "Traceback" in err


def test_subprocess_json_and_plain_output(funcs):
    res = agrad_subprocess(
        "gradcheck", "funcs.py:MulSign", "-i", "x=3", "-i", "w=3", cwd=str(funcs)
    )
    assert res.returncode == 1
    assert "\x1b" not in res.stdout + res.stderr
    assert "sign flipped" in res.stdout
    res = agrad_subprocess(
        "gradcheck", "funcs.py:Mul", "-i", "x=3", "-i", "w=3", "--json", cwd=str(funcs)
    )
    assert res.returncode == 0
    assert json.loads(res.stdout)["ok"] is True


def test_error_in_user_backward_fails_with_traceback_only_under_debug(
    capsys, tmp_path, monkeypatch
):
    (tmp_path / "raising.py").write_text(
        "from autogradcli.autograd import Function\n"
        "class Raising(Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        raise ValueError('broken backward')\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = agrad(capsys, "gradcheck", "raising.py:Raising", "-i", "x=3")
    assert code == 1
    assert "backward raised ValueError: broken backward" in out
    assert "Traceback" not in out + err
    code, out, err = agrad(capsys, "--debug", "gradcheck", "raising.py:Raising", "-i", "x=3")
    assert code == 1
    assert "Traceback" in err and 'raising.py", line 8, in backward' in err


VARARGS = (
    "from autogradcli.autograd import Function\n"
    "class WeightedSum(Function):\n"
    "    '''1*x0 + 2*x1 + 3*x2 ...: each input's gradient tells its position.'''\n"
    "    @staticmethod\n"
    "    def forward(ctx, scale, *xs):\n"
    "        ctx.n = len(xs)\n"
    "        return sum((i + 1) * scale * x for i, x in enumerate(xs))\n"
    "    @staticmethod\n"
    "    def backward(ctx, g):\n"
    "        return (None, *[(i + 1) * g for i in range(ctx.n)])\n"
    "class SwappedSum(WeightedSum):\n"
    "    '''The gradients of the first two varargs swapped.'''\n"
    "    @staticmethod\n"
    "    def backward(ctx, g):\n"
    "        return (None, 2 * g, 1 * g, *[(i + 1) * g for i in range(2, ctx.n)])\n"
)


def test_varargs_forward_takes_inputs_by_position(capsys, funcs, tmp_path):
    """``forward(ctx, scale, *xs)``: --input names past ``scale`` are the varargs, in order."""
    (tmp_path / "va.py").write_text(VARARGS)
    argv = ["-i", "a=3", "-i", "b=3", "-i", "c=3", "--arg", "scale=1.0"]
    code, doc, _ = gc_json(capsys, "va.py:WeightedSum", *argv)
    assert code == 0, doc
    checked = {p["input"] for f in doc["functions"] for p in f["pairs"]}
    assert checked == {"a", "b", "c"}
    code, doc, _ = gc_json(capsys, "va.py:SwappedSum", *argv)
    assert code == 1
    assert sorted(p["input"] for p in failing(doc)) == ["a", "b"]  # c, third, is right


def test_varargs_forward_with_no_input_names_what_to_give(capsys, funcs, tmp_path):
    (tmp_path / "va.py").write_text(VARARGS)
    code, out, err = agrad(capsys, "gradcheck", "va.py:WeightedSum", "--arg", "scale=1.0")
    assert code == 2
    assert "no floating-point tensor input to check" in out + err
    code, out, err = agrad(
        capsys, "gradcheck", "va.py:WeightedSum", "-i", "a=2", "--domain", "z=unit"
    )
    assert code == 2
    assert "--domain z: forward has no parameter 'z'" in out + err
