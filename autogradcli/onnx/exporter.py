"""``export``: ``torch.onnx.export``'s common path, built with the ``onnx`` package."""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..tensor.tensor import Tensor
from .convert import Converter
from .errors import OnnxExporterError
from .graph import GraphContext
from .trace import Tracer

__all__ = ["DEFAULT_OPSET", "MIN_OPSET", "TrainingMode", "export"]

DEFAULT_OPSET = 17  # torch.onnx's default for the TorchScript exporter
MIN_OPSET = 17  # LayerNormalization's opset


class TrainingMode(enum.IntEnum):
    """Which mode the model is exported in, as ``torch.onnx.TrainingMode``."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def _require_onnx() -> Any:
    try:
        import onnx
    except ImportError as err:
        raise ImportError(
            "exporting to ONNX needs the onnx package: pip install 'autogradcli[onnx]'"
        ) from err
    return onnx


def export(
    model: Any,
    args: Any = (),
    f: Any = None,
    *,
    kwargs: dict[str, Any] | None = None,
    export_params: bool = True,
    verbose: bool | None = None,
    training: TrainingMode = TrainingMode.EVAL,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    dynamic_axes: Mapping[str, Mapping[int, str] | Sequence[int]] | None = None,
    do_constant_folding: bool = True,
    keep_initializers_as_inputs: bool = False,
    autograd_inlining: bool = True,
    dynamic_shapes: Any = None,
    dynamo: bool = True,
    external_data: bool = True,
    operator_export_type: Any = None,
    custom_opsets: Mapping[str, int] | None = None,
    export_modules_as_functions: bool = False,
    optimize: bool = True,
    report: bool = False,
    verify: bool = False,
) -> None:
    """Trace ``model(*args)`` and write it as an ONNX model to ``f`` (a path or a binary file
    object), as ``torch.onnx.export``; parameters and buffers become initializers named by their
    state_dict keys, and the axes ``dynamic_axes`` names stay dynamic.

    Accepted for PyTorch's signature, with no effect: ``do_constant_folding`` (ONNX Runtime folds
    when it loads the file), ``keep_initializers_as_inputs``, ``dynamo``, ``external_data``,
    ``operator_export_type``, ``custom_opsets``, ``export_modules_as_functions``, ``optimize``,
    ``report``, ``verify``. ``autograd_inlining=False`` refuses a user's Function that has no
    ``symbolic`` instead of tracing the ops its forward calls."""
    if dynamic_shapes is not None:
        raise ValueError("dynamic_shapes is torch.export's form: give dynamic_axes instead")
    onnx = _require_onnx()
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise ValueError(
            f"opset_version {opset} is not supported: autogradcli exports opsets "
            f"{MIN_OPSET} to {onnx.defs.onnx_opset_version()}"
        )
    if f is None:
        raise ValueError("f (the path or file object to write the model to) is required")
    call_args, call_kwargs = _split_args(args, kwargs)
    inputs = _arg_tensors((call_args, call_kwargs))
    in_names = _names(input_names, len(inputs), "input")
    axes = _dynamic_axes(dynamic_axes, in_names, output_names)
    for t, name in zip(inputs, in_names):
        for axis in axes.get(name, {}):
            if not 0 <= axis < t.dim():
                raise ValueError(
                    f"dynamic_axes: {name!r} has {t.dim()} dims (shape {tuple(t.shape)}), no "
                    f"axis {axis}"
                )
    restore = _set_mode(model, training)
    try:
        first = _Traced.of(model, call_args, call_kwargs, autograd_inlining)
        second = None
        if any(axes.get(n) for n in in_names):
            args2, kwargs2 = _grown((call_args, call_kwargs), in_names, axes)
            second = _Traced.of(model, args2, kwargs2, autograd_inlining)
            if len(second.tracer.ops) != len(first.tracer.ops):
                raise OnnxExporterError(
                    "the forward pass ran a different number of ops for the two batch sizes "
                    "traced: its control flow depends on the batch; export without dynamic_axes"
                )
    finally:
        restore()
    model_proto = _build(model, first, second, in_names, output_names, axes, opset, export_params)
    onnx.checker.check_model(model_proto)
    if verbose:
        print(onnx.printer.to_text(model_proto.graph))
    data = model_proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


@dataclass
class _Traced:
    """One traced forward pass: its ops, its input tensors (flattened) and its output."""

    tracer: Tracer
    inputs: list[Tensor]
    out: Any

    @classmethod
    def of(cls, model: Any, args: tuple[Any, ...], kwargs: dict, inline: bool) -> _Traced:
        tracer = Tracer(inline)
        out = tracer.run(lambda *a: model(*a, **kwargs), *args)
        return cls(tracer, _arg_tensors((args, kwargs)), out)


def _build(
    model: Any,
    first: _Traced,
    second: _Traced | None,
    in_names: list[str],
    output_names: Sequence[str] | None,
    axes: dict[str, dict[int, str]],
    opset: int,
    export_params: bool,
) -> Any:
    """The ModelProto of the traced ops (``second``: the trace with the dynamic axes grown)."""
    from onnx import helper

    g = GraphContext(opset)
    params = _param_names(model)
    conv = Converter(g, params)
    graph_inputs = []
    inputs2 = second.inputs if second is not None else [None] * len(first.inputs)
    for t, t2, name in zip(first.inputs, inputs2, in_names):
        dims = axes.get(name, {})
        value = conv.bind(t, name, t2)
        for axis in dims:
            if t2 is not None:
                g.dynamic_inputs.append((value, axis, t.shape[axis], t2.shape[axis]))
        shape = [dims.get(d, s) for d, s in enumerate(t.shape)]
        graph_inputs.append(helper.make_tensor_value_info(name, _elem(t), shape))
    ops2 = second.tracer.ops if second is not None else [None] * len(first.tracer.ops)
    for op, op2 in zip(first.tracer.ops, ops2):
        conv.convert(op, op2)
    outs = _arg_tensors(first.out)
    if not outs:
        raise OnnxExporterError(f"the model returned {type(first.out).__name__}, no tensors")
    outs2 = _arg_tensors(second.out) if second is not None else [None] * len(outs)
    out_names = _names(output_names, len(outs), "output")
    graph_outputs = []
    for t, t2, name in zip(outs, outs2, out_names):
        value = conv.value(t, t2)
        g.nodes.append(helper.make_node("Identity", [value], [name], name=f"{name}/Identity"))
        dims = axes.get(name, {})
        dynamic = {d: f"{name}_dim_{d}" for d in getattr(value, "dynamic", ())}
        shape = [dims.get(d, dynamic.get(d, s)) for d, s in enumerate(t.shape)]
        graph_outputs.append(helper.make_tensor_value_info(name, _elem(t), shape))
    initializers = g.initializers
    if not export_params:
        names = set(params.values())
        extra = [i for i in initializers if i.name in names]
        graph_inputs += [helper.make_tensor_value_info(i.name, i.data_type, i.dims) for i in extra]
        initializers = [i for i in initializers if i.name not in names]
    graph = helper.make_graph(
        g.nodes, type(model).__name__, graph_inputs, graph_outputs, initializers
    )
    from .._version import __version__

    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="autogradcli",
        producer_version=__version__,
    )


def _elem(t: Tensor) -> int:
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(t._data.dtype)


def _split_args(args: Any, kwargs: dict[str, Any] | None) -> tuple[tuple[Any, ...], dict]:
    """``args`` as a tuple (a last dict: keyword arguments, as torch.onnx takes them)."""
    call_kwargs = dict(kwargs or {})
    if not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict):
        call_kwargs.update(args[-1])
        args = args[:-1]
    return args, call_kwargs


def _names(given: Sequence[str] | None, n: int, base: str) -> list[str]:
    names = list(given or [])
    if len(names) > n:
        raise ValueError(f"{len(names)} {base} names given for {n} {base}s")
    default = [base] if n == 1 else [f"{base}_{i}" for i in range(n)]
    return names + default[len(names) :]


def _dynamic_axes(axes: Any, in_names: list[str], out_names: Any) -> dict[str, dict[int, str]]:
    """``dynamic_axes`` as {name: {axis: symbol}} (a list of axes gets generated symbols)."""
    known = set(in_names) | set(out_names or [])
    result: dict[str, dict[int, str]] = {}
    for name, dims in (axes or {}).items():
        if name not in known and out_names is not None:
            raise ValueError(f"dynamic_axes names {name!r}, which is no input or output name")
        if isinstance(dims, Mapping):
            result[name] = {int(k): str(v) for k, v in dims.items()}
        else:
            result[name] = {int(k): f"{name}_dynamic_axes_{i + 1}" for i, k in enumerate(dims)}
    return result


def _arg_tensors(args: Any) -> list[Tensor]:
    """The tensors in ``args`` (nested tuples, lists and dicts), in order: the graph's inputs
    (or outputs)."""
    if isinstance(args, Tensor):
        return [args]
    if isinstance(args, (tuple, list)):
        return [t for a in args for t in _arg_tensors(a)]
    if isinstance(args, Mapping):
        return [t for a in args.values() for t in _arg_tensors(a)]
    return []


def _grown(args: Any, in_names: list[str], axes: dict) -> Any:
    """``args`` with each dynamic axis one longer (its first slice repeated): the second trace."""
    from ..ops import cat

    count = iter(range(len(in_names)))

    def grow(a: Any) -> Any:
        if isinstance(a, Tensor):
            for axis in axes.get(in_names[next(count)], {}):
                a = cat([a, a.narrow(axis, 0, 1)], axis)
            return a
        if isinstance(a, (tuple, list)):
            items = [grow(x) for x in a]
            return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
        if isinstance(a, Mapping):
            return {k: grow(v) for k, v in a.items()}
        return a

    return grow(args)


def _param_names(model: Any) -> dict[int, str]:
    """id(parameter or buffer) -> its state_dict key (the first, for shared ones)."""
    names: dict[int, str] = {}
    state = getattr(model, "state_dict", None)
    if state is None:
        return names
    for key, t in state(keep_vars=True).items():
        if isinstance(t, Tensor):
            names.setdefault(id(t), key)
    for key, t in (
        model.named_parameters(remove_duplicate=False) if hasattr(model, "named_parameters") else ()
    ):
        names.setdefault(id(t), key)
    return names


def _set_mode(model: Any, training: TrainingMode) -> Any:
    """Put ``model`` in the export's mode; returns the function that restores each module's."""
    modules = list(model.modules()) if hasattr(model, "modules") else []
    before = [m.training for m in modules]
    if training == TrainingMode.EVAL and modules:
        model.eval()
    elif training == TrainingMode.TRAINING and modules:
        model.train()

    def restore() -> None:
        for m, mode in zip(modules, before):
            m.training = mode

    return restore
