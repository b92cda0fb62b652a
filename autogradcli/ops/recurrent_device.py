"""The LSTM step's elementwise work as one fused kernel each way, for device arrays.

On a GPU a step of ``ops/recurrent_cells.LSTMCell`` is one product and then about ten small
elementwise launches (gate activations, the cell update, tanh, the output gate; in backward the
gradients of the four gates); each costs a launch and Python's call into cupy, and together they
were most of the LSTM step on an H100. Here each direction's elementwise part is one
``backend.kernels.Kernel`` (traced by ``cupy.fuse``), computing the same formulas in the same
order as the CPU loop, which stays the reference (numpy arrays never come here).
"""

from __future__ import annotations

from typing import Any

from ..backend.kernels import Kernel, Scratch

__all__ = ["LSTM_STEP", "LSTM_STEP_BACKWARD"]


def _lstm_step(
    xp: Any,
    scratch: Scratch,
    zi: Any,
    zf: Any,
    zg: Any,
    zo: Any,
    xi: Any,
    xf: Any,
    xg: Any,
    xo: Any,
    c_prev: Any,
    c: Any,
    tc: Any,
    h: Any,
) -> None:
    """Gates from the hidden products ``z*`` (in place) plus the input projections ``x*`` (the
    sigmoid rows pre-scaled by 0.5: ``0.5 tanh(z) + 0.5``), then ``c = f c_prev + i g``,
    ``tc = tanh(c)``, ``h = o tc``."""
    i = xp.add(xp.multiply(xp.tanh(xp.add(zi, xi)), 0.5), 0.5, out=zi)
    f = xp.add(xp.multiply(xp.tanh(xp.add(zf, xf)), 0.5), 0.5, out=zf)
    g = xp.tanh(xp.add(zg, xg), out=zg)
    o = xp.add(xp.multiply(xp.tanh(xp.add(zo, xo)), 0.5), 0.5, out=zo)
    cn = xp.add(xp.multiply(f, c_prev), xp.multiply(i, g), out=c)
    xp.multiply(o, xp.tanh(cn, out=tc), out=h)


def _lstm_step_backward(
    xp: Any,
    scratch: Scratch,
    dh_carry: Any,
    dout: Any,
    k: Any,
    f: Any,
    q0: Any,
    q1: Any,
    q2: Any,
    q3: Any,
    dc: Any,
    d0: Any,
    d1: Any,
    d2: Any,
    d3: Any,
) -> None:
    """One step back: ``dh = carried + output's``, ``dc += dh k``, the gate gradients
    ``d0..2 = q0..2 dc`` and ``d3 = q3 dh``, then ``dc *= f`` for the step before."""
    dh = xp.add(dh_carry, dout)
    dcn = xp.add(dc, xp.multiply(dh, k))
    xp.multiply(q0, dcn, out=d0)
    xp.multiply(q1, dcn, out=d1)
    xp.multiply(q2, dcn, out=d2)
    xp.multiply(q3, dh, out=d3)
    xp.multiply(dcn, f, out=dc)


LSTM_STEP = Kernel("lstm_step", _lstm_step)
LSTM_STEP_BACKWARD = Kernel("lstm_step_backward", _lstm_step_backward)
