"""Recurrent layers: RNN, LSTM, GRU and their cells (``torch.nn``), built from Tensor ops.

The input-to-hidden products of a layer are one matrix product over all time steps; each step
then adds its hidden-to-hidden product and applies the gates (PyTorch's order: i, f, g, o for
LSTM, r, z, n for GRU), so gradients, including grad-of-grad, come from the ops' own backwards.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..ops.join import chunk, stack
from ..tensor.factory import empty, zeros
from ..tensor.tensor import Tensor
from . import init
from .functional.linear import dropout, linear
from .module import Module
from .parameter import Parameter

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _lstm_step(xw: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> tuple:
    gates = xw + linear(h, w_hh, b_hh)
    i, f, g, o = chunk(gates, 4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


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
        if bidirectional or proj_size:
            raise NotImplementedError(
                f"{type(self).__name__}: bidirectional and proj_size are not supported yet"
            )
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
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size
            shapes = [("weight_ih", (gate_size, in_size)), ("weight_hh", (gate_size, hidden_size))]
            if bias:
                shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
            for name, shape in shapes:
                full = f"{name}_l{layer}"
                setattr(self, full, Parameter(empty(*shape, dtype=dtype, device=device)))
                self._flat_weights_names.append(full)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in ±1/sqrt(hidden_size), as PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _layer(self, k: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        get = self.__getattr__
        if self.bias:
            return (
                get(f"weight_ih_l{k}"),
                get(f"weight_hh_l{k}"),
                get(f"bias_ih_l{k}"),
                get(f"bias_hh_l{k}"),
            )
        return get(f"weight_ih_l{k}"), get(f"weight_hh_l{k}"), None, None

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

    def _prepare(self, input: Tensor, hx: Any, n_states: int) -> tuple[Tensor, list, bool]:
        """Input as (L, N, in) and the initial states as lists of per-layer (N, H) tensors."""
        if input.ndim not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {input.shape[-1]}"
            )
        unbatched = input.ndim == 2
        x = input.unsqueeze(1) if unbatched else input
        if self.batch_first and not unbatched:
            x = x.transpose(0, 1)
        n = x.shape[1]
        if hx is None:
            state = zeros(self.num_layers, n, self.hidden_size, dtype=x.dtype, device=x.device)
            states = [state] * n_states
        else:
            states = list(hx) if n_states > 1 else [hx]
            if unbatched:
                states = [s.unsqueeze(1) for s in states]
            expected = (self.num_layers, n, self.hidden_size)
            for s in states:
                if tuple(s.shape) != expected:
                    raise RuntimeError(f"Expected hidden size {expected}, got {list(s.shape)}")
        return x, [[s[k] for s in states] for k in range(self.num_layers)], unbatched

    def _run(self, input: Tensor, hx: Any, n_states: int, step: Callable) -> tuple[Tensor, list]:
        x, init_states, unbatched = self._prepare(input, hx, n_states)
        finals: list[list[Tensor]] = []
        for k in range(self.num_layers):
            w_ih, w_hh, b_ih, b_hh = self._layer(k)
            if k > 0 and self.dropout and self.training:
                x = dropout(x, self.dropout, True)
            xw = linear(x, w_ih, b_ih)  # (L, N, G): all time steps in one product
            states = init_states[k]
            outputs = []
            for t in range(x.shape[0]):
                states = step(xw[t], states, w_hh, b_hh)
                outputs.append(states[0])
            x = stack(outputs, 0)
            finals.append(states)
        out = x.squeeze(1) if unbatched else (x.transpose(0, 1) if self.batch_first else x)
        result = [stack([f[i] for f in finals], 0) for i in range(n_states)]
        if unbatched:
            result = [r.squeeze(1) for r in result]
        return out, result


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
        out, (h,) = self._run(input, hx, 1, lambda xw, s, w, b: [_rnn_step(xw, s[0], w, b, relu)])
        return out, h


class LSTM(RNNBase):
    """Long short-term memory; returns (output, (h_n, c_n))."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        out, (h, c) = self._run(
            input, hx, 2, lambda xw, s, w, b: list(_lstm_step(xw, s[0], s[1], w, b))
        )
        return out, (h, c)


class GRU(RNNBase):
    """Gated recurrent unit; returns (output, h_n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        out, (h,) = self._run(input, hx, 1, lambda xw, s, w, b: [_gru_step(xw, s[0], w, b)])
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
