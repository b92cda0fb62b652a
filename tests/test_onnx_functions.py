"""The export's API around the op table: user autograd.Functions (inlined, refused, or through
``symbolic``), files and file objects, names, modes, options and errors."""

from __future__ import annotations

import io
import os
import sys

import numpy as np
import pytest
from onnx_runtime import check_export, randn

import autogradcli as ag
from autogradcli import nn
from autogradcli.autograd.grad_mode import STATE


class NumpyRelu(ag.autograd.Function):  # computes on raw arrays: no traceable form
    @staticmethod
    def forward(ctx, x):
        return ag.from_numpy(np.maximum(x.numpy(), 0))

    @staticmethod
    def backward(ctx, g):
        return g


class SymbolicLeaky(ag.autograd.Function):  # the same, with PyTorch's symbolic
    @staticmethod
    def forward(ctx, x):
        arr = x.numpy()
        return ag.from_numpy(np.where(arr > 0, arr, arr * np.float32(0.1)))

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def symbolic(g, x):  # PyTorch's forms: a suffixed attribute, a Constant from a tensor
        zero = g.op("Constant", value_t=ag.tensor([0.0]))
        return g.op("Add", g.op("LeakyRelu", x, alpha_f=0.1), zero)


class _Apply(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.fn = fn

    def forward(self, x):
        return self.fn.apply(self.fc(x))


def _export(model, *args, **kw):
    pytest.importorskip("onnx")
    from autogradcli.onnx import export

    buf = io.BytesIO()
    export(model, args, buf, **kw)
    return buf.getvalue()


def test_function_without_onnx_form_is_refused_naming_it():
    from autogradcli.onnx import UnsupportedOperatorError

    line = _line_of("class NumpyRelu")
    with pytest.raises(UnsupportedOperatorError) as err:
        _export(_Apply(NumpyRelu), randn(2, 3))
    message = str(err.value)
    assert "NumpyRelu" in message and f"{__file__}:{line}" in message
    assert "symbolic(g, *inputs)" in message
    assert STATE.trace is None  # the hook is removed after a failed export


def _line_of(text: str) -> int:
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if line.startswith(text))


def test_symbolic_function_exports_as_pytorch_does():
    proto = check_export(_Apply(SymbolicLeaky), lambda n: (randn(n, 3),))
    assert [n.op_type for n in proto.graph.node].count("LeakyRelu") == 1


def test_function_made_of_ops_is_inlined():
    class Swish(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            s = x.sigmoid()
            ctx.save_for_backward(x, s)
            return x * s

        @staticmethod
        def backward(ctx, g):
            x, s = ctx.saved_tensors
            return g * s * (1 + x * (1 - s))

    proto = check_export(_Apply(Swish), lambda n: (randn(n, 3),))
    assert [n.op_type for n in proto.graph.node][-3:] == ["Sigmoid", "Mul", "Identity"]
    from autogradcli.onnx import UnsupportedOperatorError

    with pytest.raises(UnsupportedOperatorError, match=r"Swish .*autograd_inlining=False"):
        _export(_Apply(Swish), randn(2, 3), autograd_inlining=False)


def test_path_and_file_object_give_the_same_model(tmp_path):
    """The call ``agrad export`` makes, to a path and to an open file."""
    onnx = pytest.importorskip("onnx")
    from autogradcli.onnx import export

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    call = dict(
        input_names=["input"], output_names=["output"],
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
    )  # fmt: skip
    export(model, (randn(2, 3),), str(tmp_path / "a.onnx"), **call)
    with open(tmp_path / "b.onnx", "wb") as f:
        export(model, (randn(2, 3),), f, **call)
    a, b = (onnx.load(str(tmp_path / n)) for n in ("a.onnx", "b.onnx"))
    assert a.SerializeToString() == b.SerializeToString()
    (inp,), (out,) = a.graph.input, a.graph.output
    assert inp.name == "input" and out.name == "output"
    assert inp.type.tensor_type.shape.dim[0].dim_param == "batch"
    assert out.type.tensor_type.shape.dim[0].dim_param == "batch"
    assert sorted(i.name for i in a.graph.initializer) == sorted(model.state_dict())


def test_static_shapes_without_dynamic_axes():
    onnx = pytest.importorskip("onnx")
    proto = onnx.load_from_string(_export(nn.Linear(3, 2), randn(4, 3)))
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [4, 3]


def test_export_params_false_makes_weights_inputs():
    onnx = pytest.importorskip("onnx")
    model = nn.Sequential(nn.Linear(3, 2))
    proto = onnx.load_from_string(_export(model, randn(4, 3), export_params=False))
    assert [i.name for i in proto.graph.input] == ["input", "0.weight", "0.bias"]
    assert not proto.graph.initializer


def test_eval_mode_for_the_export_and_the_mode_restored():
    onnx = pytest.importorskip("onnx")
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5), nn.BatchNorm1d(3))
    model.train()
    proto = onnx.load_from_string(_export(model, randn(4, 3)))
    kinds = {n.op_type for n in proto.graph.node}
    assert "Dropout" not in kinds and "BatchNormalization" in kinds
    assert model.training and model[1].training and model[2].training
    assert int(model[2].num_batches_tracked.item()) == 0  # no training step ran


@pytest.mark.parametrize("layer", [nn.Dropout(0.5), nn.BatchNorm1d(3)], ids=["dropout", "bn"])
def test_training_mode_export_is_refused_and_preserve_keeps_eval(layer):
    from autogradcli.onnx import OnnxExporterError, TrainingMode

    before = {k: v.clone() for k, v in layer.state_dict().items()}
    with pytest.raises(OnnxExporterError, match=r"in training mode .*export in eval mode"):
        _export(layer, randn(4, 3), training=TrainingMode.TRAINING)
    assert layer.training  # restored after the failed export; the running statistics kept
    stats = [k for k in before if k.startswith("running")]
    assert all(ag.equal(before[k], layer.state_dict()[k]) for k in stats)
    layer.eval()
    check_export(layer, lambda n: (randn(n, 3),), training=TrainingMode.PRESERVE)
    assert not layer.training


def test_a_size_that_follows_the_batch_in_python_is_refused():
    from autogradcli.onnx import OnnxExporterError

    class Scale(nn.Module):
        def forward(self, x):
            return x * float(x.shape[0])  # a Python number computed from the batch

    with pytest.raises(OnnxExporterError, match="changes with the dynamic axes"):
        _export(Scale(), randn(4, 3), dynamic_axes={"input": {0: "batch"}})
    _export(Scale(), randn(4, 3))  # a fixed batch: fine


def test_opset_range_and_opset_18():
    """Opset 18 moved the reductions' axes to inputs: a Transformer layer and pooling there."""
    with pytest.raises(ValueError, match="opset_version 11"):
        _export(nn.Linear(3, 2), randn(2, 3), opset_version=11)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).eval()
    model = nn.Sequential(layer, nn.Flatten(), nn.Unflatten(1, (1, 5, 8)), nn.AdaptiveAvgPool2d(1))
    proto = check_export(model, lambda n: (randn(n, 5, 8),), opset_version=18)
    assert proto.opset_import[0].version == 18


def test_missing_onnx_package_names_the_extra(monkeypatch):
    from autogradcli.onnx import export

    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"pip install 'autogradcli\[onnx\]'"):
        export(nn.Linear(3, 2), randn(2, 3), io.BytesIO())


def test_verbose_prints_the_graph(capsys):
    _export(nn.Linear(3, 2), randn(2, 3), verbose=True)
    assert "Gemm" in capsys.readouterr().out


def test_keyword_arguments_as_a_trailing_dict():
    ort = pytest.importorskip("onnxruntime")

    class Shift(nn.Module):
        def forward(self, x, shift=0.0):
            return x + shift

    x = randn(2, 3)
    data = _export(Shift(), x, {"shift": 1.5})
    (got,) = ort.InferenceSession(data).run(None, {"input": x.numpy()})
    np.testing.assert_allclose(got, x.numpy() + 1.5, rtol=1e-6)


def test_a_model_on_cuda_exports_through_the_array_seam(strict_cuda):
    """Weights and constants reach the file through the backend's host copy (the strict cupy
    stand-in refuses numpy calls on device arrays)."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.AvgPool2d(2), nn.Flatten())
    model.to("cuda").eval()
    x = ag.randn(2, 1, 6, 6, device="cuda")
    data = _export(model, x, dynamic_axes={"input": {0: "batch"}})
    weights = {
        i.name: numpy_helper.to_array(i) for i in onnx.load_from_string(data).graph.initializer
    }
    np.testing.assert_array_equal(weights["0.weight"], model[0].weight.detach().cpu().numpy())


def test_readme_example_runs(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## Exporting to ONNX") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("```\n", start)]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert (tmp_path / "model.onnx").stat().st_size > 0


def test_ops_recorded_under_enable_grad_are_refused_not_frozen():
    from autogradcli.onnx import OnnxExporterError

    class Grad(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            with ag.enable_grad():
                return self.fc(x) * 2

    with pytest.raises(OnnxExporterError, match="enable_grad"):
        _export(Grad(), randn(2, 3))


def test_is_in_onnx_export_and_dynamic_axes_checked():
    from autogradcli.onnx import is_in_onnx_export

    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(is_in_onnx_export())
            return x * 2

    _export(Probe(), randn(2, 3))
    assert seen == [True] and not is_in_onnx_export()
    with pytest.raises(ValueError, match=r"'input' has 2 dims .*no axis 2"):
        _export(Probe(), randn(2, 3), dynamic_axes={"input": {2: "x"}})
