"""ONNX converter of the fused recurrent layer op: one ONNX LSTM/GRU/RNN node per layer and
direction, with PyTorch's gate order (i f g o; r z n) permuted to ONNX's (i o f c; z r h) by a
Gather on the weights, which keep their state_dict names."""

from __future__ import annotations

from typing import Any

from ..ops.recurrent import RecurrentSequence
from .convert import Node
from .errors import OnnxExporterError
from .graph import GraphContext
from .registry import converter

# ONNX's gate blocks, as indices of PyTorch's blocks
_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN_TANH": (0,), "RNN_RELU": (0,)}
_OP = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _gates(g: GraphContext, w: Any, mode: str, hidden: int) -> Any:
    """``w`` (G*H, ...) with its gate blocks in ONNX's order, and a leading direction axis."""
    order = _ORDER[mode]
    if order != tuple(range(len(order))):
        rows = [b * hidden + r for b in order for r in range(hidden)]
        w = g.op("Gather", w, g.ints(rows), axis=0)
    return g.unsqueeze(w, [0])


@converter(RecurrentSequence)
def _recurrent(g: GraphContext, node: Node) -> Any:
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse = node.args[:10]
    if w_hr is not None:
        raise OnnxExporterError("LSTM with proj_size > 0 has no ONNX LSTM form")
    gates = len(_ORDER[mode])
    hidden = w_hh.shape[0] // gates
    w = _gates(g, w_ih, mode, hidden)
    r = _gates(g, w_hh, mode, hidden)
    b = None
    if b_ih is not None:
        b = g.op("Concat", _gates(g, b_ih, mode, hidden), _gates(g, b_hh, mode, hidden), axis=1)
    attrs: dict[str, Any] = {
        "hidden_size": hidden,
        "direction": "reverse" if reverse else "forward",
    }
    if mode == "GRU":
        attrs["linear_before_reset"] = 1
    if mode == "RNN_RELU":
        attrs["activations"] = ["Relu"]
    inputs = [x, w, r, b, None, g.unsqueeze(h0, [0])]
    if mode == "LSTM":
        inputs.append(g.unsqueeze(c0, [0]))
    n_out = 3 if mode == "LSTM" else 2
    outs = g.op(_OP[mode], *inputs, outputs=n_out, **attrs)
    y = g.squeeze(outs[0], [1])  # (L, 1, N, H) -> (L, N, H)
    finals = [g.squeeze(o, [0]) for o in outs[1:]]
    return (y, *finals)
