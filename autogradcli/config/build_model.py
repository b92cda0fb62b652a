"""Building the model: one layer (block) at a time, each run on the real output of the layers
before it (a dry forward on a small batch, without grad, in eval mode).

So ``auto`` sizes come from the actual input (``registry.AUTO_KEYS`` says which dim), and a
shape mismatch is reported against the layer's key and line, with both shapes, instead of as a
traceback from the first training step.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..autograd.grad_mode import no_grad
from ..nn.container import Sequential
from ..nn.function_layer import FunctionLayer
from ..nn.module import Module
from ..nn.parameter import Parameter
from ..tensor.tensor import Tensor
from . import registry
from .blocks import Graph
from .builder import Builder, shape_text, tensor_arguments
from .errors import Path
from .schema import BLOCK_RESERVED, LAYER_RESERVED

__all__ = ["DataSizes", "build_model"]


def build_model(b: Builder, x: Tensor, sizes: DataSizes | None = None) -> tuple[Module | None, Any]:
    """(model, its output on ``x``): a Sequential for a list of layers, a ``Graph`` for
    ``blocks``; (None, None) after a problem (reported). ``sizes`` (the data kind's
    ``sizes(state)`` and its name) resolve ``out_features: auto`` on the last layer and
    ``num_embeddings: auto``."""
    spec = b.config.data["model"]
    sizes = sizes or DataSizes({}, "")
    if isinstance(spec, list):
        layers: dict[str, Module] = {}
        for i, layer_spec in enumerate(spec):
            sizes.last = i == len(spec) - 1
            tie = layers.get(layer_spec.get("tie", ""))
            module, x = _layer(b, layer_spec, ("model", i), [x], LAYER_RESERVED, sizes, tie)
            if module is None:
                return None, None
            layers[layer_spec.get("name", str(i))] = module
        return Sequential(OrderedDict(layers)), x
    values: dict[str, Any] = {"input": x}
    wiring = []
    built: dict[str, Module] = {}
    for name, block in spec["blocks"].items():
        refs = block["inputs"] if "inputs" in block else [block["input"]]
        sizes.last = name == spec["output"]
        module, out = _layer(
            b,
            block,
            ("model", "blocks", name),
            [values[r] for r in refs],
            BLOCK_RESERVED,
            sizes,
            built.get(block.get("tie", "")),
        )
        if module is None:
            return None, None
        values[name] = out
        built[name] = module
        wiring.append((name, module, refs))
    return Graph(wiring, spec["output"]), values[spec["output"]]


class DataSizes:
    """The sizes a data kind knows (``classes``, ``vocab``), the kind's name for messages, and
    whether the layer being built is the model's last (its output)."""

    def __init__(self, sizes: dict[str, Any], kind: str) -> None:
        self.sizes, self.kind, self.last = dict(sizes), kind, False

    def resolve(self, b: Builder, key: str, path: Path) -> int | None:
        """The data size ``auto`` stands for at ``key``, or None after reporting why none."""
        what = registry.DATA_SIZE_KEYS[key]
        if key == "out_features" and not self.last:
            b.error(path, "out_features: auto is the number of classes: only the last layer's")
            return None
        if what not in self.sizes:
            b.error(
                path,
                f"{key}: auto is the data's {what} count, which dataset {self.kind!r} does not "
                "know: give a number",
            )
            return None
        return int(self.sizes[what])

    def layout(self, b: Builder, target: Any, what: str, path: Path) -> Any:
        """The part of the data layer ``target`` is built from (its ``data_layout`` key of the
        sizes: ``embeddings``, a table's embedding slots), or None after reporting, at the
        layer, that the data has none."""
        key = target.data_layout
        if key not in self.sizes:
            b.error(path, f"{what}: dataset {self.kind!r} has no {target.data_layout_needs}")
            return None
        return self.sizes[key]


def _layer(
    b: Builder,
    spec: dict[str, Any],
    path: Path,
    inputs: Sequence[Any],
    reserved: tuple,
    sizes: DataSizes,
    tie: Module | None = None,
) -> tuple[Module | None, Any]:
    """(module, output) for one layer spec run on ``inputs``, or (None, None); ``tie``: the
    layer whose ``weight`` it shares (``tie:``)."""
    kind = spec["type"]
    target = b.lookup(kind, path + ("type",), registry.layer_types())
    if target is None:
        return None, None
    x = inputs[0]
    kwargs = {k: v for k, v in spec.items() if k not in reserved}
    what = getattr(target, "__name__", str(kind))
    try:
        if registry.is_function_class(target):
            params = {}
            for pname, shape in (kwargs.get("params") or {}).items():
                dims = shape if isinstance(shape, list) else [shape]
                params[pname] = [int(x.shape[-1]) if d == "auto" else d for d in dims]
            module = FunctionLayer(target, params, kwargs.get("init"), kwargs.get("args", ()))
        else:
            if getattr(target, "data_layout", None) is not None:
                layout = sizes.layout(b, target, what, path)
                if layout is None:
                    return None, None
                kwargs["layout"] = layout
            for key, value in kwargs.items():
                if value == "auto" and registry.own_auto(target, key):
                    continue
                if value == "auto" and key in registry.DATA_SIZE_KEYS:
                    size = sizes.resolve(b, key, path + (key,))
                    if size is None:
                        return None, None
                    kwargs[key] = size
                elif value == "auto":
                    dim = registry.AUTO_KEYS[key]
                    if not isinstance(x, Tensor) or x.dim() < (2 if dim == 1 else 1):
                        b.error(
                            path + (key,),
                            f"cannot infer {key} from an input of shape {shape_text(x)}",
                        )
                        return None, None
                    kwargs[key] = int(x.shape[dim])
            tensor_arguments(kwargs)
            module = target(**kwargs)
    except Exception as err:
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        b.error(path, f"{what}({args}) failed: {type(err).__name__}: {err}")
        return None, None
    if not isinstance(module, Module):
        b.error(path, f"{what} built a {type(module).__name__}, not an nn.Module")
        return None, None
    if tie is not None and not _tie(b, module, tie, spec["tie"], path):
        return None, None
    try:
        with no_grad():
            module.eval()
            out = module(*inputs)
            module.train()
    except Exception as err:
        shapes = " and ".join(shape_text(i) for i in inputs)
        b.error(path, f"{_expects(module)} cannot take an input of shape {shapes}: {err}")
        return None, None
    bad = _not_a_tensor(out)
    if bad is not None:
        b.error(path, f"{what} returned {bad}, not a Tensor")
        return None, None
    return module, out


def _tie(b: Builder, module: Module, source: Module, ref: str, path: Path) -> bool:
    """Make ``module.weight`` the ``weight`` of the layer ``ref`` (one tensor, trained once, as
    a GPT's head shares its token embedding); False after reporting weights that differ."""
    mine, theirs = getattr(module, "weight", None), getattr(source, "weight", None)
    if isinstance(mine, Parameter) and isinstance(theirs, Parameter) and mine.shape == theirs.shape:
        module.weight = theirs
        return True

    def show(w: Any) -> str:
        return f"a weight {tuple(w.shape)}" if isinstance(w, Parameter) else "no weight"

    b.error(
        path + ("tie",),
        f"cannot share layer {ref!r}'s weight: it has {show(theirs)} and "
        f"{type(module).__name__} has {show(mine)} (tie needs weights of the same shape)",
    )
    return False


def _not_a_tensor(out: Any) -> str | None:
    """What ``out`` is when a layer's output cannot be the next layer's input or the loss's:
    None, a list, a numpy array, a number... (a tuple, as RNN layers return, is allowed)."""
    if isinstance(out, Tensor) or (isinstance(out, tuple) and out):
        return None
    if out is None:
        return "None"
    kind = type(out)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    return f"a {name}"


def _expects(module: Module) -> str:
    """The module's repr line, plus what input it expects where its sizes say so:
    ``Linear(in_features=64, ...) expects inputs of shape (*, 64); it``."""
    text = repr(module).splitlines()[0]
    if text.endswith("("):  # a layer with sublayers: its repr's first line is an open bracket
        text = type(module).__name__
    for attr, fmt in (
        ("in_features", "expects inputs of shape (*, {})"),
        ("in_channels", "expects {} input channels (dim 1)"),
        ("num_features", "expects {} features (dim 1)"),
        ("normalized_shape", "expects trailing dims {}"),
        ("input_size", "expects inputs of shape (*, {})"),
    ):
        value = getattr(module, attr, None)
        if value is not None:
            if isinstance(value, (tuple, list)):
                value = tuple(value)
            return f"{text} {fmt.format(value)}; it"
    return text
