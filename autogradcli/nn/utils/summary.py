"""``summarize(model, sample_input)``: a torchinfo-style table of a model.

One dry forward pass with forward hooks on every module records each layer's output shape; the
table lists the modules in ``named_modules()`` order with their attribute names, indented by
depth, their parameter counts, whether those train, and the multiply-accumulate operations
(MACs) of the layers that have a known cost (Linear, Bilinear, Conv*, ConvTranspose*,
RNN/LSTM/GRU and their cells, affine norms: one per element, Embedding: 0). Layers that are
custom autograd Functions (``FunctionLayer``) are marked as such.

Totals count shared parameters once. Memory:

- parameters: the bytes of the unique parameters (buffers are reported separately);
- activations kept for backward: **measured**, not estimated: the forward runs with autograd on,
  and the graph behind the outputs is walked node by node, summing the bytes of what each node
  keeps (``save_for_backward`` entries and arrays held as ctx attributes), each array once and
  parameters excluded. It is for the batch given (``ModelSummary.batch_size``).

The forward does not change the model: buffers (e.g. BatchNorm running stats) and the random
state are restored afterwards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["LayerRow", "ModelSummary", "summarize"]


@dataclass
class LayerRow:
    """One module of the table."""

    name: str  # named_modules() name ("" for the root)
    type: str  # class name (the Function's name for a FunctionLayer)
    depth: int
    output_shape: Any  # list of dims with the batch dim as "B", nested lists for tuples, None
    params: int  # parameters shown on this row (its own; recursive where children are hidden)
    trainable: str  # "yes" | "no" | "partial" | "--" (no parameters)
    macs: int | None  # per sample; None when unknown
    is_function: bool = False  # a custom autograd Function used as a layer
    shared: bool = False  # some of its parameters appeared on an earlier row
    calls: int = 0  # forward calls seen in the dry run
    hidden_children: bool = False  # children cut off by ``depth``

    @property
    def label(self) -> str:
        """``fc1 (Linear)``; the root is just its type."""
        kind = f"{self.type} [Function]" if self.is_function else self.type
        return kind if not self.name else f"{self.name.rsplit('.', 1)[-1]} ({kind})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "depth": self.depth,
            "output_shape": self.output_shape,
            "params": self.params,
            "trainable": self.trainable,
            "macs": self.macs,
            "is_function": self.is_function,
            "shared": self.shared,
            "calls": self.calls,
        }


@dataclass
class ModelSummary:
    """The result of :func:`summarize`."""

    model_type: str
    rows: list[LayerRow]
    input_shape: Any
    batch_size: int | None
    total_params: int
    trainable_params: int
    non_trainable_params: int
    shared_params: int  # parameters reachable under more than one name (counted once)
    param_bytes: int
    buffer_bytes: int
    activation_bytes: int  # saved for backward, measured (see the module docstring)
    input_bytes: int
    total_macs: int  # per sample, of the layers with a known cost
    macs_unknown: list[str] = field(default_factory=list)  # layers whose cost is not counted
    depth: int = 3

    def to_dict(self) -> dict[str, Any]:
        return {
            "model_type": self.model_type,
            "input_shape": self.input_shape,
            "batch_size": self.batch_size,
            "depth": self.depth,
            "rows": [r.to_dict() for r in self.rows],
            "total_params": self.total_params,
            "trainable_params": self.trainable_params,
            "non_trainable_params": self.non_trainable_params,
            "shared_params": self.shared_params,
            "param_bytes": self.param_bytes,
            "buffer_bytes": self.buffer_bytes,
            "activation_bytes": self.activation_bytes,
            "activation_bytes_method": "measured: bytes saved for backward by the graph's nodes",
            "input_bytes": self.input_bytes,
            "macs_per_sample": self.total_macs,
            "macs_unknown": self.macs_unknown,
        }

    def table_rows(self) -> list[tuple[str, str, str, str]]:
        """(layer, output shape, param #, trainable) strings, indentation included."""
        out = []
        for r in self.rows:
            indent = "" if r.depth == 0 else "  " * (r.depth - 1) + "├─"
            params = "--" if r.params == 0 else f"{r.params:,}"
            if r.shared and r.params:
                params += " (shared)"
            out.append((indent + r.label, format_shape(r.output_shape), params, r.trainable))
        return out

    def totals_lines(self) -> list[str]:
        lines = [
            f"Total params: {self.total_params:,}",
            f"Trainable params: {self.trainable_params:,}",
            f"Non-trainable params: {self.non_trainable_params:,}",
        ]
        if self.shared_params:
            lines.append(f"Shared params (counted once): {self.shared_params:,}")
        macs = f"MACs per sample: {format_count(self.total_macs)}"
        if self.macs_unknown:
            macs += f" (not counted: {', '.join(self.macs_unknown)})"
        lines.append(macs)
        batch = f"B={self.batch_size}" if self.batch_size is not None else "the sample input"
        lines += [
            f"Input size: {format_bytes(self.input_bytes)} ({batch})",
            f"Params size: {format_bytes(self.param_bytes)}"
            + (f" (+ buffers {format_bytes(self.buffer_bytes)})" if self.buffer_bytes else ""),
            f"Activations saved for backward: {format_bytes(self.activation_bytes)} "
            f"({batch}, measured)",
        ]
        return lines

    def to_text(self) -> str:
        """The table as plain text, in torchinfo's layout (for model.txt)."""
        head = ("Layer (type)", "Output Shape", "Param #", "Trainable")
        rows = self.table_rows()
        widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(4)]
        widths = [w + 3 for w in widths[:3]] + [widths[3]]
        rule = "=" * sum(widths)

        def line(cells: tuple[str, ...]) -> str:
            return "".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

        parts = [rule, line(head), rule, *(line(r) for r in rows), rule, *self.totals_lines()]
        parts.append(rule)
        return "\n".join(parts) + "\n"

    def __str__(self) -> str:
        return self.to_text()


# ----------------------------------------------------------------------------- formatting
def format_shape(shape: Any) -> str:
    if shape is None:
        return "--"
    if isinstance(shape, list) and shape and isinstance(shape[0], list):
        return "[" + ", ".join(format_shape(s) for s in shape) + "]"
    if isinstance(shape, list):
        return "[" + ", ".join(str(d) for d in shape) + "]"
    return str(shape)


def format_bytes(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def format_count(n: int) -> str:
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.2f}{unit} ({n:,})"
    return f"{n:,}"


# ----------------------------------------------------------------------------- internals
def _tensors(x: Any) -> list[Any]:
    from ...tensor.tensor import Tensor

    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in _tensors(item)]
    if isinstance(x, dict):
        return [t for item in x.values() for t in _tensors(item)]
    return []


def _shape_of(x: Any, batch: int | None) -> Any:
    from ...tensor.tensor import Tensor

    if isinstance(x, Tensor):
        dims: list[Any] = list(x.shape)
        if batch is not None and dims and dims[0] == batch:
            dims[0] = "B"
        return dims
    if isinstance(x, (tuple, list)):
        return [_shape_of(item, batch) for item in x if _tensors(item)]
    return None


def _macs(module: Any, inputs: tuple[Any, ...], output: Any) -> int | None:
    """Multiply-accumulates of one call of a leaf module, or None when unknown."""
    name = type(module).__name__
    outs = _tensors(output)
    if not outs:
        return None
    out = outs[0]
    if name == "Linear":
        return out.numel() * module.in_features
    if name == "Bilinear":
        return out.numel() * module.in1_features * module.in2_features
    if name.startswith("Conv"):  # ConvNd and ConvTransposeNd
        k = math.prod(module.kernel_size)
        if name.startswith("ConvTranspose"):
            x = _tensors(inputs)[0]
            return x.numel() * (module.out_channels // module.groups) * k
        return out.numel() * (module.in_channels // module.groups) * k
    if name in ("Embedding", "EmbeddingBag"):
        return 0
    if "Norm" in name:  # the affine scale and shift: one multiply-add per element
        return out.numel() if list(module.parameters(recurse=False)) else 0
    gates = {"RNN": 1, "LSTM": 4, "GRU": 3, "RNNCell": 1, "LSTMCell": 4, "GRUCell": 3}.get(name)
    if gates is not None:
        x = _tensors(inputs)[0]
        h = module.hidden_size
        if name.endswith("Cell"):
            rows = x.numel() // x.shape[-1]
            return rows * gates * h * (x.shape[-1] + h)
        steps = x.numel() // x.shape[-1]  # time steps times batch
        dirs = 2 if module.bidirectional else 1
        total, size_in = 0, x.shape[-1]
        for _ in range(module.num_layers):
            total += steps * dirs * gates * h * (size_in + h)
            size_in = h * dirs
        return total
    return None


def _saved_bytes(outputs: list[Any], exclude: set[int]) -> int:
    """Bytes kept for backward by the graph behind ``outputs`` (each array once)."""
    from ...tensor.tensor import Tensor

    seen_nodes: set[int] = set()
    seen_arrays: set[int] = set()
    total = 0

    def add(arr: Any) -> None:
        nonlocal total
        if not hasattr(arr, "nbytes") or not hasattr(arr, "shape"):
            return
        root = arr
        while getattr(root, "base", None) is not None and hasattr(root.base, "nbytes"):
            root = root.base
        if id(root) in seen_arrays or id(root) in exclude:
            return
        seen_arrays.add(id(root))
        total += int(root.nbytes)

    stack = [t._grad_fn for t in outputs if getattr(t, "_grad_fn", None) is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        saved = getattr(node, "_saved", None) or ()
        for entry in saved:
            if entry is None:
                continue
            add(entry._data if isinstance(entry, Tensor) else getattr(entry, "data", None))
        for key, value in getattr(node, "__dict__", {}).items():
            if key.startswith("_"):
                continue
            if isinstance(value, Tensor):
                add(value._data)
            elif isinstance(value, np.ndarray) or type(value).__module__.startswith("cupy"):
                add(value)
        for edge in getattr(node, "_next", ()) or ():
            if edge is not None and edge[0] is not None:
                stack.append(edge[0])
    return total


def _root_id(arr: Any) -> int:
    while getattr(arr, "base", None) is not None and hasattr(arr.base, "nbytes"):
        arr = arr.base
    return id(arr)


def summarize(model: Any, sample_input: Any, depth: int = 3) -> ModelSummary:
    """Summarize ``model`` by running ``sample_input`` (a Tensor or a tuple of arguments) through
    it once. ``depth`` limits the rows shown (0: the model alone); deeper modules are folded into
    their ancestor at the limit, whose parameter count is then recursive."""
    from ...autograd.grad_mode import enable_grad
    from ...tensor.random import get_rng_state, set_rng_state
    from ..function_layer import FunctionLayer

    args = sample_input if isinstance(sample_input, tuple) else (sample_input,)
    first = _tensors(args)
    batch = int(first[0].shape[0]) if first and first[0].dim() >= 1 else None

    modules = list(model.named_modules())
    records: dict[int, dict[str, Any]] = {}
    handles = []

    def make_hook(mod: Any) -> Any:
        def hook(module: Any, inputs: tuple[Any, ...], output: Any) -> None:
            rec = records.setdefault(id(module), {"calls": 0, "macs": 0, "known": True})
            rec["calls"] += 1
            if rec["calls"] == 1:
                rec["shape"] = _shape_of(output, batch)
            if not list(module.children()):
                m = _macs(module, inputs, output)
                if m is None:
                    rec["known"] = False
                else:
                    rec["macs"] += m

        return hook

    for _, mod in modules:
        handles.append(mod.register_forward_hook(make_hook(mod)))

    buffers = [(b, b._data.copy()) for b in model.buffers()]
    rng = get_rng_state()
    try:
        with enable_grad():
            output = model(*args)
    finally:
        for h in handles:
            h.remove()
        for b, data in buffers:
            b._data[...] = data
        set_rng_state(rng)

    params = list(model.named_parameters(remove_duplicate=False))
    unique: dict[int, Any] = {}
    for _, p in params:
        unique.setdefault(id(p), p)
    param_arrays = {_root_id(p._data) for p in unique.values()}
    out_tensors = _tensors(output)
    activation_bytes = _saved_bytes(out_tensors, param_arrays)

    seen_params: set[int] = set()
    rows: list[LayerRow] = []
    unknown: list[str] = []
    total_macs = 0
    for name, mod in modules:
        d = 0 if name == "" else name.count(".") + 1
        rec = records.get(id(mod), {})
        is_leaf = not list(mod.children())
        if is_leaf and rec:
            if rec["known"]:
                total_macs += rec["macs"]
            elif list(mod.parameters(recurse=False)):
                unknown.append(f"{name} ({type(mod).__name__})" if name else type(mod).__name__)
        if d > depth:
            continue
        hidden = d == depth and not is_leaf
        own = list(mod.parameters(recurse=hidden))
        count = sum(p.numel() for p in own)
        shared = any(id(p) in seen_params for p in own)
        seen_params.update(id(p) for p in own)
        if not own:
            trainable = "--"
        elif all(p.requires_grad for p in own):
            trainable = "yes"
        elif not any(p.requires_grad for p in own):
            trainable = "no"
        else:
            trainable = "partial"
        is_function = isinstance(mod, FunctionLayer)
        kind = getattr(mod.fn, "__name__", "Function") if is_function else type(mod).__name__
        macs = None
        if is_leaf and rec and rec["known"] and batch:
            macs = rec["macs"] // batch
        rows.append(
            LayerRow(
                name,
                kind,
                d,
                rec.get("shape"),
                count,
                trainable,
                macs,
                is_function,
                shared,
                rec.get("calls", 0),
                hidden,
            )
        )

    total = sum(p.numel() for p in unique.values())
    trainable_n = sum(p.numel() for p in unique.values() if p.requires_grad)
    counts: dict[int, int] = {}
    for _, p in params:
        counts[id(p)] = counts.get(id(p), 0) + 1
    shared_n = sum(unique[i].numel() for i, c in counts.items() if c > 1)
    return ModelSummary(
        model_type=type(model).__name__,
        rows=rows,
        input_shape=_shape_of(args[0] if len(args) == 1 else list(args), batch),
        batch_size=batch,
        total_params=total,
        trainable_params=trainable_n,
        non_trainable_params=total - trainable_n,
        shared_params=shared_n,
        param_bytes=sum(int(p._data.nbytes) for p in unique.values()),
        buffer_bytes=sum(int(b._data.nbytes) for b in model.buffers()),
        activation_bytes=activation_bytes,
        input_bytes=sum(int(t._data.nbytes) for t in first),
        total_macs=total_macs // batch if batch else total_macs,
        macs_unknown=unknown,
        depth=depth,
    )
