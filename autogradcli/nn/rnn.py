"""Recurrent layers: RNN, LSTM, GRU and their cells (``torch.nn``), built from Tensor ops.

Stacked layers, ``bidirectional`` (a second pass over the reversed sequence, its weights suffixed
``_reverse`` and its output concatenated after the forward one) and LSTM ``proj_size`` (h projected
by ``weight_hr``) follow PyTorch's parameter names, shapes and state layouts.

Each layer and direction runs as one whole-sequence Function (ops/recurrent.py: the input
projection one GEMM, each weight gradient one GEMM over the sequence); ``_fused_applies`` is the
one place that chooses. The per-step ops (``_steps``: each step adds its hidden-to-hidden product
to the input projection and applies the gates, PyTorch's order i, f, g, o for LSTM, r, z, n for
GRU) remain for empty inputs, ``FUSED = False``, the cells, and ``create_graph``, under which the
Function differentiates them instead, so grad-of-grad works.

A ``PackedSequence`` input (nn/utils/rnn.py) gives a ``PackedSequence`` output: each sequence runs
its own length, its h_n/c_n are those of its last step, the reverse direction starts at its own
end, and the initial and final states are in the caller's batch order (``sorted_indices``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..backend import to_numpy
from ..ops._util import scalar_type_name
from ..ops.join import cat, chunk, stack
from ..ops.recurrent import recurrent_sequence
from ..tensor.factory import empty, zeros
from ..tensor.tensor import Tensor
from . import init
from .functional.linear import dropout, linear
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
FUSED = True  # whole-sequence Functions where they apply (tests set False for the per-step ops)


def _lstm_step(
    xw: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None, w_hr: Any = None
) -> tuple:
    gates = xw + linear(h, w_hh, b_hh)
    i, f, g, o = chunk(gates, 4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else linear(h, w_hr)), c


def _gru_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    xr, xz, xn = chunk(xw, 3, 1)
    hr, hz, hn = chunk(linear(h, w_hh, b_hh), 3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (h - n)  # (1 - z) * n + z * h


def _rnn_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool) -> Tensor:
    pre = xw + linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


class RNNBase(Module):
    """Shared state of RNN/LSTM/GRU: per-layer weights ``weight_ih_l{k}`` etc., init, repr."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError("hidden_size and num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [
                    ("weight_ih", (gate_size, in_size)),
                    ("weight_hh", (gate_size, real_hidden)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    full = f"{name}_l{layer}{suffix}"
                    setattr(self, full, Parameter(empty(*shape, dtype=dtype, device=device)))
                    self._flat_weights_names.append(full)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in ±1/sqrt(hidden_size), as PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights for cuDNN here; autogradcli has no cuDNN."""

    def _layer(self, k: int, suffix: str = "") -> tuple[Any, ...]:
        """(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr) of layer ``k``, None where absent."""
        get = self.__getattr__
        names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
        present = (True, True, self.bias, self.bias, self.proj_size > 0)
        return tuple(get(f"{n}_l{k}{suffix}") if have else None for n, have in zip(names, present))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _check_input(
        self, input: Tensor, dims: tuple[int, ...], dtype_error: type = ValueError
    ) -> None:
        """PyTorch's errors for an input of the wrong rank, feature size or dtype (a packed
        input's dtype error is a RuntimeError in PyTorch)."""
        if input.ndim not in dims:
            shown = " or ".join(f"{d}D" for d in dims)
            raise ValueError(
                f"{type(self).__name__}: Expected input to be {shown}, got {input.ndim}D instead"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {input.shape[-1]}"
            )
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise dtype_error(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                f"Convert input: input.to({weight.dtype}), or convert model: "
                f"model.to({input.dtype})"
            )

    def _initial_states(
        self, x: Tensor, n: int, hx: Any, n_states: int, unbatched: bool, order: Any = None
    ) -> list:
        """The initial states as per-(layer, direction) lists of (N, H) tensors, in PyTorch's
        order (index ``layer * directions + direction``); ``order`` permutes the batch (a
        packed batch's ``sorted_indices``)."""
        rows = self.num_layers * (2 if self.bidirectional else 1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        sizes = [real_hidden, self.hidden_size][:n_states]  # h, then LSTM's c
        if hx is None:
            states = [zeros(rows, n, size, dtype=x.dtype, device=x.device) for size in sizes]
        else:
            states = list(hx) if n_states > 1 else [hx]
            if unbatched:
                states = [s.unsqueeze(1) for s in states]
            for i, (s, size) in enumerate(zip(states, sizes)):
                expected = (rows, n, size)
                if tuple(s.shape) != expected:
                    which = "hidden" if i == 0 or n_states == 1 else "cell"
                    raise RuntimeError(f"Expected {which} size {expected}, got {list(s.shape)}")
                if s.dtype != x.dtype:
                    raise RuntimeError(
                        "mat1 and mat2 must have the same dtype, but got "
                        f"{scalar_type_name(s._data.dtype)} and {scalar_type_name(x._data.dtype)}"
                    )
            if order is not None:
                states = [s.index_select(1, order) for s in states]
        return [[s[r] for s in states] for r in range(rows)]

    def _run(self, input: Any, hx: Any, n_states: int, step: Callable) -> tuple[Any, list]:
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx, n_states, step)
        self._check_input(input, (2, 3))
        unbatched = input.ndim == 2
        x = input.unsqueeze(1) if unbatched else input
        if self.batch_first and not unbatched:
            x = x.transpose(0, 1)
        init_states = self._initial_states(x, x.shape[1], hx, n_states, unbatched)
        x, finals = self._layers(x, init_states, n_states, step, None)
        out = x.squeeze(1) if unbatched else (x.transpose(0, 1) if self.batch_first else x)
        result = [stack([f[i] for f in finals], 0) for i in range(n_states)]
        if unbatched:
            result = [r.squeeze(1) for r in result]
        return out, result

    def _run_packed(
        self, packed: PackedSequence, hx: Any, n_states: int, step: Callable
    ) -> tuple[PackedSequence, list]:
        """A packed batch: each sequence runs its own length (its final states are those of
        its last step; the reverse direction starts at its end), states in the caller's order."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        self._check_input(data, (2,), RuntimeError)
        sizes = tuple(int(b) for b in to_numpy(batch_sizes._data))
        n = sizes[0] if sizes else 0
        init_states = self._initial_states(data, n, hx, n_states, False, sorted_indices)
        x, finals = self._layers(data, init_states, n_states, step, sizes)
        result = [stack([f[i] for f in finals], 0) for i in range(n_states)]
        if unsorted_indices is not None:
            result = [r.index_select(1, unsorted_indices) for r in result]
        return PackedSequence(x, batch_sizes, sorted_indices, unsorted_indices), result

    def _layers(
        self, x: Tensor, init_states: list, n_states: int, step: Callable, sizes: Any
    ) -> tuple[Tensor, list]:
        """Every layer and direction over ``x`` ((L, N, I), or packed (T, I) rows with the
        batch ``sizes`` of each step): the last layer's output and every final state."""
        directions = 2 if self.bidirectional else 1
        fused = _fused_applies(self, x)
        finals: list[list[Tensor]] = []
        for k in range(self.num_layers):
            if k > 0 and self.dropout and self.training:
                x = dropout(x, self.dropout, True)
            outs = []
            for d in range(directions):
                weights = self._layer(k, "_reverse" if d else "")
                states = init_states[k * directions + d]
                if fused:
                    composed = _composed(step, n_states, bool(d), sizes)
                    out, states = recurrent_sequence(
                        self.mode, x, states, weights, bool(d), composed, sizes
                    )
                else:
                    out, states = _steps(step, x, states, weights, bool(d), sizes)
                outs.append(out)
                finals.append(states)
            x = outs[0] if directions == 1 else cat(outs, -1)
        return x, finals


def _fused_applies(rnn: RNNBase, x: Tensor) -> bool:
    """Whether the layers run as whole-sequence Functions (ops/recurrent.py): the one place that
    chooses; the per-step ops remain for empty inputs and ``FUSED = False``."""
    return FUSED and x.shape[0] > 0 and x.shape[1] > 0


def _steps(
    step: Callable, x: Tensor, states: list, weights: tuple, reverse: bool, sizes: Any = None
) -> tuple[Tensor, list]:
    """One layer-direction as per-step ops: the (L, N, H) output and the final states."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xw = linear(x, w_ih, b_ih)  # (L, N, G): all time steps in one product
    if sizes is not None:
        return _packed_steps(step, xw, states, weights, reverse, sizes)
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    outputs: list[Tensor] = []
    for t in steps:
        states = step(xw[t], states, w_hh, b_hh, w_hr)
        outputs.append(states[0])
    if reverse:
        outputs.reverse()
    return stack(outputs, 0), states


def _packed_steps(
    step: Callable, xw: Tensor, states: list, weights: tuple, reverse: bool, sizes: tuple
) -> tuple[Tensor, list]:
    """Per-step ops over packed rows: step t runs the first ``sizes[t]`` sequences, the others
    keep their states (ended, or for the reverse direction not yet started)."""
    _, w_hh, _, b_hh, w_hr = weights
    starts = [0]
    for b in sizes:
        starts.append(starts[-1] + b)
    outputs: list[Any] = [None] * len(sizes)
    for t in reversed(range(len(sizes))) if reverse else range(len(sizes)):
        b = sizes[t]
        new = step(xw[starts[t] : starts[t + 1]], [s[:b] for s in states], w_hh, b_hh, w_hr)
        outputs[t] = new[0]
        states = [u if b == s.shape[0] else cat([u, s[b:]], 0) for u, s in zip(new, states)]
    return cat(outputs, 0), states


def _composed(step: Callable, n_states: int, reverse: bool, sizes: Any) -> Callable[..., Any]:
    """The per-step form of one layer-direction, as the fused Function recomputes it for
    create_graph: ``(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr) -> (output, *final states)``."""

    def run(x: Tensor, h0: Tensor, c0: Any, *weights: Any) -> tuple[Tensor, ...]:
        states = [h0, c0][:n_states]
        out, finals = _steps(step, x, states, weights, reverse, sizes)
        return (out, *finals)

    return run


class RNN(RNNBase):
    """Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args: Any, nonlinearity: str = "tanh", **kwargs: Any) -> None:
        if len(args) > 3:  # positional (input_size, hidden_size, num_layers, nonlinearity, ...)
            nonlinearity, args = args[3], args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        relu = self.nonlinearity == "relu"
        out, (h,) = self._run(
            input, hx, 1, lambda xw, s, w, b, _: [_rnn_step(xw, s[0], w, b, relu)]
        )
        return out, h


class LSTM(RNNBase):
    """Long short-term memory; returns (output, (h_n, c_n))."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        out, (h, c) = self._run(
            input, hx, 2, lambda xw, s, w, b, w_hr: list(_lstm_step(xw, s[0], s[1], w, b, w_hr))
        )
        return out, (h, c)


class GRU(RNNBase):
    """Gated recurrent unit; returns (output, h_n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        out, (h,) = self._run(input, hx, 1, lambda xw, s, w, b, _: [_gru_step(xw, s[0], w, b)])
        return out, h


class _CellBase(Module):
    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        gates: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        g = gates * hidden_size
        self.weight_ih = Parameter(empty(g, input_size, dtype=dtype, device=device))
        self.weight_hh = Parameter(empty(g, hidden_size, dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(empty(g, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(g, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batched(self, input: Tensor, hx: Any, n: int) -> tuple[Tensor, list, bool]:
        unbatched = input.ndim == 1
        x = input.unsqueeze(0) if unbatched else input
        if hx is None:
            z = zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            return x, [z] * n, unbatched
        states = list(hx) if n > 1 else [hx]
        return x, [s.unsqueeze(0) if unbatched else s for s in states], unbatched


class RNNCell(_CellBase):
    """One Elman RNN step."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), unbatched = self._batched(input, hx, 1)
        xw = linear(x, self.weight_ih, self.bias_ih)
        h = _rnn_step(xw, h, self.weight_hh, self.bias_hh, self.nonlinearity == "relu")
        return h.squeeze(0) if unbatched else h


class LSTMCell(_CellBase):
    """One LSTM step; returns (h', c')."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        x, (h, c), unbatched = self._batched(input, hx, 2)
        xw = linear(x, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(xw, h, c, self.weight_hh, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(_CellBase):
    """One GRU step."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), unbatched = self._batched(input, hx, 1)
        xw = linear(x, self.weight_ih, self.bias_ih)
        h = _gru_step(xw, h, self.weight_hh, self.bias_hh)
        return h.squeeze(0) if unbatched else h
