"""ONNX Runtime as the oracle of an export: ``check_export(model, make_inputs, **export_kwargs)``
exports ``model`` on ``make_inputs(3)`` with a dynamic batch axis, checks the file with
``onnx.checker``, and compares ONNX Runtime's outputs with autogradcli's at batch sizes 2 and 5
(float32 tolerance). Each test skips when onnx or onnxruntime is not installed."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import autogradcli as ag

TRACED, CHECKED = 3, (2, 5)  # the batch size exported, and those compared


def _flat(out: Any) -> list[np.ndarray]:
    if isinstance(out, ag.Tensor):
        return [out.numpy()]
    return [a for o in out for a in _flat(o)]


def check_export(
    model: Any,
    make_inputs: Callable[[int], tuple[Any, ...]],
    batch_axis: int = 0,
    sizes: tuple[int, ...] = CHECKED,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    **export_kwargs: Any,
) -> Any:
    """Export ``model`` and compare ONNX Runtime with autogradcli; returns the ModelProto."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from autogradcli.onnx import export

    example = make_inputs(TRACED)
    names = [f"input_{i}" for i in range(len(_flat(example)))]  # nested tuples too
    buf = io.BytesIO()
    export(
        model, example, buf, input_names=names,
        dynamic_axes={n: {batch_axis: "batch"} for n in names}, **export_kwargs,
    )  # fmt: skip
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1  # CI's cores are the tests'
    session = ort.InferenceSession(buf.getvalue(), options, providers=["CPUExecutionProvider"])
    for n in sizes:
        inputs = make_inputs(n)
        with ag.no_grad():
            want = _flat(model(*inputs))
        feed = dict(zip(names, _flat(inputs)))
        got = session.run(None, feed)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (n, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"batch {n}")
    return proto


def randn(*shape: int, seed: int = 0) -> ag.Tensor:
    """float32 normal values, seeded by shape (a new batch size gives new values)."""
    rng = np.random.default_rng([seed, *shape])
    return ag.tensor(rng.standard_normal(shape).astype(np.float32))
