"""The per-time-step loops of the fused recurrent Functions (ops/recurrent.py), on arrays.

One class per mode (LSTM, GRU, Elman RNN with tanh or relu), each a ``forward`` over the sequence
that fills whole-sequence buffers step by step (only the hidden-to-hidden product is per step) and
a ``backward`` that runs the recurrence backwards and returns the gate gradients of every step, so
that ops/recurrent.py computes each weight gradient as one matrix product over the sequence.

The loops work feature-major: a step's gates are a contiguous (G, N) block and its product is
``W_hh @ h`` with h as (H, N), which OpenBLAS runs about twice as fast as ``h @ W_hh^T`` at
these sizes (N, the batch, is small). Buffers are (L, features, N) in processing order (step
``s`` is time ``L-1-s`` for the reverse direction); ops/recurrent.py converts at the edges. Sigmoid gates
use ``sigmoid(z) = 0.5 * tanh(0.5 * z) + 0.5`` (backend/kernels.py's form): their weight rows come
in pre-scaled by 0.5 (exact in binary floating point), so one ``tanh`` covers all gates of a step
and an affine ``* post_a + post_b`` turns the sigmoid columns into sigmoids.

A packed batch (``sizes``: how many sequences run at each processing step, sorted longest
first) runs padded, each step on its first ``sizes[s]`` columns only: the others hold their
states through the step (a sequence that has ended, or for the reverse direction one that has
not started), and in the backward pass their gradients pass through unchanged, with zero gate
gradients.
"""

from __future__ import annotations

from typing import Any

from .recurrent_device import LSTM_STEP, LSTM_STEP_BACKWARD

__all__ = ["CELLS", "Cell"]


class Cell:
    """One mode's gate count, which gates are sigmoids, whether ``b_hh`` folds into the input
    projection, and its forward/backward loops."""

    gates = 1
    sigmoid = (False,)
    fold_bias = True
    n_states = 1

    def scale(self, xp: Any, hidden: int, dtype: Any) -> Any:
        """Per-row factor of the gate weights: 0.5 on sigmoid gates, 1 elsewhere (None: all 1)."""
        if not any(self.sigmoid):
            return None
        return xp.concatenate([xp.full(hidden, 0.5 if s else 1.0, dtype) for s in self.sigmoid])

    def post(self, xp: Any, hidden: int, dtype: Any) -> tuple[Any, Any]:
        """``(a, b)`` columns with ``tanh(scaled z) * a + b`` the gate activations."""
        a = xp.concatenate([xp.full(hidden, 0.5 if s else 1.0, dtype) for s in self.sigmoid])
        b = xp.concatenate([xp.full(hidden, 0.5 if s else 0.0, dtype) for s in self.sigmoid])
        return a[:, None], b[:, None]


def _running(sizes: Any, s: int, n: int) -> int:
    """How many sequences (the first columns) run at step ``s``: all ``n`` unless packed."""
    return n if sizes is None else sizes[s]


def _hold(bufs: tuple, s: int, nb: int) -> None:
    """Carry the states of the sequences that do not run at step ``s`` (columns ``nb:``)
    unchanged through it."""
    for buf in bufs:
        if nb < buf.shape[-1]:
            buf[s + 1][:, nb:] = buf[s][:, nb:]


def _alloc(xp: Any, sizes: Any) -> Any:
    """``xp.empty`` for whole batches; ``xp.zeros`` for packed ones, whose columns outside the
    running sequences are never written but must stay finite (and zero as gradients)."""
    return xp.empty if sizes is None else xp.zeros


def _device_step(xp: Any, kernel: Any) -> Any:
    """``kernel``'s runner for a device's arrays (``ops/recurrent_device.py``); None on numpy,
    whose loop below is the reference."""
    return None if xp.__name__ == "numpy" else kernel.on[xp]


def _rows(block: Any, h: int) -> list[Any]:
    """The four gate rows (each ``h`` high) of a step's (4H, N) block."""
    return [block[j * h : (j + 1) * h] for j in range(4)]


def _dh_at(dh_carry: Any, dout: Any, s: int, nb: int, xp: Any, out: Any) -> Any:
    """The gradient reaching step ``s``'s hidden state for its ``nb`` running columns: carried
    plus the output's. Columns that do not run keep their carried gradient untouched."""
    return xp.add(dh_carry[:, :nb], dout[s][:, :nb], out=out[:, :nb])


class LSTMCell(Cell):
    """i, f, g, o gates; c' = f c + i g, h' = o tanh(c')."""

    gates = 4
    sigmoid = (True, True, False, True)
    n_states = 2

    def forward(self, xp: Any, xw: Any, states: list, weights: tuple, sizes: Any = None) -> Any:
        """Fill the gates, cell states, tanh(c) and hidden states of the whole sequence (with
        ``w_hr``, h is projected: ``h = W_hr (o tanh(c))``, the unprojected ones kept)."""
        w_hh, _, w_hr = weights  # b_hh is folded into xw
        L, G, N = xw.shape
        H = G // 4
        dt = xw.dtype
        a, b = self.post(xp, H, dt)
        alloc = _alloc(xp, sizes)
        gates = alloc((L, G, N), dt)
        hs = xp.empty((L + 1, w_hh.shape[1], N), dt)
        cs = xp.empty((L + 1, H, N), dt)
        tcs = alloc((L, H, N), dt)
        hr = None if w_hr is None else alloc((L, H, N), dt)
        hs[0] = states[0]
        cs[0] = states[1]
        tmp = xp.empty((H, N), dt)
        fused = _device_step(xp, LSTM_STEP)
        for s in range(L):
            nb = _running(sizes, s, N)
            gt = gates[s][:, :nb]
            xp.matmul(w_hh, hs[s][:, :nb], out=gt)
            if fused is not None:  # a device: the elementwise rest as one kernel
                xs, h = xw[s][:, :nb], (hs[s + 1] if hr is None else hr[s])[:, :nb]
                c_prev, c = cs[s][:, :nb], cs[s + 1][:, :nb]
                fused(None, *_rows(gt, H), *_rows(xs, H), c_prev, c, tcs[s][:, :nb], h)
                if hr is not None:
                    xp.matmul(w_hr, h, out=hs[s + 1][:, :nb])
                _hold((hs, cs), s, nb)
                continue
            gt += xw[s][:, :nb]
            xp.tanh(gt, out=gt)
            gt *= a
            gt += b
            c, t = cs[s + 1][:, :nb], tmp[:, :nb]
            xp.multiply(gt[H : 2 * H], cs[s][:, :nb], out=c)
            xp.multiply(gt[:H], gt[2 * H : 3 * H], out=t)
            c += t
            tc = xp.tanh(c, out=tcs[s][:, :nb])
            if hr is None:
                xp.multiply(gt[3 * H :], tc, out=hs[s + 1][:, :nb])
            else:
                o_tc = xp.multiply(gt[3 * H :], tc, out=hr[s][:, :nb])
                xp.matmul(w_hr, o_tc, out=hs[s + 1][:, :nb])
            _hold((hs, cs), s, nb)
        return hs, (gates, cs, tcs, hr), [hs[L], cs[L]]

    def backward(
        self, xp: Any, hs: Any, saved: tuple, grads: tuple, weights: tuple, sizes: Any = None
    ) -> Any:
        """Gate gradients of every step (``dx_gates``, ``dh_gates``: the same array here), the
        initial states' gradients and, with a projection, the gradients reaching the projected
        h of every step (for ``dW_hr``; else None)."""
        dout, dfinal = grads
        w_hh, w_hr = weights
        gates, cs, tcs, hr = saved
        L, G, N = gates.shape
        H = G // 4
        dt = gates.dtype
        gv = gates.reshape(L, 4, H, N)
        i, f, g, o = gv[:, 0], gv[:, 1], gv[:, 2], gv[:, 3]
        # local derivatives of the whole sequence at once: dc += dh * k; dgates = [dc, dc, dc, dh] * q
        k = 1.0 - tcs * tcs
        k *= o
        q = 1.0 - gates
        q *= gates  # sigmoid' = y (1 - y); the g rows become tanh' = 1 - y^2 below
        qv = q.reshape(L, 4, H, N)
        xp.multiply(g, g, out=qv[:, 2])
        xp.subtract(1.0, qv[:, 2], out=qv[:, 2])
        qv[:, 0] *= g
        qv[:, 1] *= cs[:-1]
        qv[:, 2] *= i
        qv[:, 3] *= tcs
        alloc = _alloc(xp, sizes)
        d = alloc((L, G, N), dt)
        dv = d.reshape(L, 4, H, N)
        dh_carry = dfinal[0].copy()
        dc_all = dfinal[1].copy()
        dh_buf = xp.empty((H, N), dt)
        tmp = xp.empty((H, N), dt)
        w_hh_t = w_hh.T
        dproj = None if hr is None else alloc((L, w_hh.shape[1], N), dt)
        fused = _device_step(xp, LSTM_STEP_BACKWARD) if hr is None else None
        for s in range(L - 1, -1, -1):
            nb = _running(sizes, s, N)
            if fused is not None:  # a device: the elementwise part as one kernel
                qs, ds = [qv[s, j, :, :nb] for j in range(4)], [dv[s, j, :, :nb] for j in range(4)]
                dh, fs = dh_carry[:, :nb], f[s][:, :nb]
                fused(None, dh, dout[s][:, :nb], k[s][:, :nb], fs, *qs, dc_all[:, :nb], *ds)
                xp.matmul(w_hh_t, d[s][:, :nb], out=dh)
                continue
            if dproj is None:
                dh = _dh_at(dh_carry, dout, s, nb, xp, dh_buf)
            else:  # through the projection: dh_raw = W_hr^T dh
                dp = _dh_at(dh_carry, dout, s, nb, xp, dproj[s])
                dh = xp.matmul(w_hr.T, dp, out=dh_buf[:, :nb])
            dc, t = dc_all[:, :nb], tmp[:, :nb]
            xp.multiply(dh, k[s][:, :nb], out=t)
            dc += t
            xp.multiply(qv[s, :3, :, :nb], dc, out=dv[s, :3, :, :nb])
            xp.multiply(qv[s, 3, :, :nb], dh, out=dv[s, 3, :, :nb])
            dc *= f[s][:, :nb]
            xp.matmul(w_hh_t, d[s][:, :nb], out=dh_carry[:, :nb])
        return d, d, [dh_carry, dc_all], dproj


class GRUCell(Cell):
    """r, z, n gates; n = tanh(x_n + r (W_hn h + b_hn)), h' = n + z (h - n)."""

    gates = 3
    sigmoid = (True, True, False)
    fold_bias = False

    def forward(self, xp: Any, xw: Any, states: list, weights: tuple, sizes: Any = None) -> Any:
        """Fill the gates, hidden projections and hidden states of the whole sequence."""
        w_hh, b_hh, _ = weights
        L, G, N = xw.shape
        H = G // 3
        dt = xw.dtype
        alloc = _alloc(xp, sizes)
        gates = alloc((L, G, N), dt)
        hg = alloc((L, G, N), dt)
        hs = xp.empty((L + 1, H, N), dt)
        hs[0] = states[0]
        for s in range(L):
            nb = _running(sizes, s, N)
            xs, hgs, gt = xw[s][:, :nb], hg[s][:, :nb], gates[s][:, :nb]
            xp.matmul(w_hh, hs[s][:, :nb], out=hgs)
            if b_hh is not None:
                hgs += b_hh
            rz = gt[: 2 * H]
            xp.add(xs[: 2 * H], hgs[: 2 * H], out=rz)
            xp.tanh(rz, out=rz)
            rz *= 0.5
            rz += 0.5
            n = gt[2 * H :]
            xp.multiply(gt[:H], hgs[2 * H :], out=n)
            n += xs[2 * H :]
            xp.tanh(n, out=n)
            h = hs[s + 1][:, :nb]
            xp.subtract(hs[s][:, :nb], n, out=h)
            h *= gt[H : 2 * H]
            h += n
            _hold((hs,), s, nb)
        return hs, (gates, hg), [hs[L]]

    def backward(
        self, xp: Any, hs: Any, saved: tuple, grads: tuple, weights: tuple, sizes: Any = None
    ) -> Any:
        """Gradients of the input-side and hidden-side gate pre-activations of every step, and
        the initial state's."""
        dout, dfinal = grads
        w_hh = weights[0]
        gates, hg = saved
        L, G, N = gates.shape
        H = G // 3
        dt = gates.dtype
        r, z, n = gates[:, :H], gates[:, H : 2 * H], gates[:, 2 * H :]
        a1 = 1.0 - n * n
        a1 *= 1.0 - z  # dn_pre = dh * a1
        a2 = hs[:-1] - n
        a2 *= z * (1.0 - z)  # dz_pre = dh * a2
        a3 = r * (1.0 - r)
        a3 *= hg[:, 2 * H :]  # dr_pre = dn_pre * a3
        alloc = _alloc(xp, sizes)
        dhg = alloc((L, G, N), dt)
        dxn = alloc((L, H, N), dt)
        dh_carry = dfinal[0].copy()
        dh_buf = xp.empty((H, N), dt)
        tmp = xp.empty((H, N), dt)
        w_hh_t = w_hh.T
        for s in range(L - 1, -1, -1):
            nb = _running(sizes, s, N)
            dh = _dh_at(dh_carry, dout, s, nb, xp, dh_buf)
            dn = xp.multiply(dh, a1[s][:, :nb], out=dxn[s][:, :nb])
            xp.multiply(dn, r[s][:, :nb], out=dhg[s, 2 * H :, :nb])
            xp.multiply(dh, a2[s][:, :nb], out=dhg[s, H : 2 * H, :nb])
            xp.multiply(dn, a3[s][:, :nb], out=dhg[s, :H, :nb])
            carry, t = dh_carry[:, :nb], tmp[:, :nb]
            xp.multiply(dh, z[s][:, :nb], out=carry)
            xp.matmul(w_hh_t, dhg[s][:, :nb], out=t)
            carry += t
        dxg = dhg.copy()
        dxg[:, 2 * H :] = dxn
        return dxg, dhg, [dh_carry], None


class ElmanCell(Cell):
    """h' = tanh(W_ih x + W_hh h + b) (or relu)."""

    def __init__(self, relu: bool) -> None:
        self.relu = relu

    def forward(self, xp: Any, xw: Any, states: list, weights: tuple, sizes: Any = None) -> Any:
        """Fill the hidden states of the whole sequence."""
        w_hh = weights[0]  # b_hh is folded into xw
        L, H, N = xw.shape
        hs = xp.empty((L + 1, H, N), xw.dtype)
        hs[0] = states[0]
        for s in range(L):
            nb = _running(sizes, s, N)
            h = hs[s + 1][:, :nb]
            xp.matmul(w_hh, hs[s][:, :nb], out=h)
            h += xw[s][:, :nb]
            if self.relu:
                xp.maximum(h, 0, out=h)
            else:
                xp.tanh(h, out=h)
            _hold((hs,), s, nb)
        return hs, (), [hs[L]]

    def backward(
        self, xp: Any, hs: Any, saved: tuple, grads: tuple, weights: tuple, sizes: Any = None
    ) -> Any:
        """Pre-activation gradients of every step and the initial state's."""
        dout, dfinal = grads
        w_hh = weights[0]
        y = hs[1:]
        deriv = (y > 0).astype(y.dtype) if self.relu else 1.0 - y * y
        L, H, N = y.shape
        d = _alloc(xp, sizes)((L, H, N), y.dtype)
        dh_carry = dfinal[0].copy()
        dh_buf = xp.empty((H, N), y.dtype)
        w_hh_t = w_hh.T
        for s in range(L - 1, -1, -1):
            nb = _running(sizes, s, N)
            dh = _dh_at(dh_carry, dout, s, nb, xp, dh_buf)
            xp.multiply(dh, deriv[s][:, :nb], out=d[s][:, :nb])
            xp.matmul(w_hh_t, d[s][:, :nb], out=dh_carry[:, :nb])
        return d, d, [dh_carry], None


CELLS: dict[str, Cell] = {
    "LSTM": LSTMCell(),
    "GRU": GRUCell(),
    "RNN_TANH": ElmanCell(False),
    "RNN_RELU": ElmanCell(True),
}
