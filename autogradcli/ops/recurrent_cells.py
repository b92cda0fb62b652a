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
first) runs padded: the columns past ``sizes[s]`` hold their states through step ``s`` (a
sequence that has ended, or for the reverse direction one that has not started), and in the
backward pass they pass their gradients through unchanged, with zero gate gradients.
"""

from __future__ import annotations

from typing import Any

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


def _ended(sizes: Any, s: int, n: int) -> int | None:
    """The first column (sequence) that has no step ``s`` in a packed batch; None if all run."""
    if sizes is None or sizes[s] >= n:
        return None
    return sizes[s]


def _hold(bufs: tuple, s: int, end: int | None) -> None:
    """Carry the ended sequences' states unchanged through step ``s``."""
    if end is not None:
        for buf in bufs:
            buf[s + 1][:, end:] = buf[s][:, end:]


def _dh_at(dh_carry: Any, dout: Any, s: int, xp: Any, out: Any) -> Any:
    """The gradient reaching step ``s``'s hidden state (H, N): carried plus the output's."""
    return xp.add(dh_carry, dout[s], out=out)


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
        gates = xp.empty((L, G, N), dt)
        hs = xp.empty((L + 1, w_hh.shape[1], N), dt)
        cs = xp.empty((L + 1, H, N), dt)
        tcs = xp.empty((L, H, N), dt)
        hr = None if w_hr is None else xp.empty((L, H, N), dt)
        hs[0] = states[0]
        cs[0] = states[1]
        tmp = xp.empty((H, N), dt)
        for s in range(L):
            gt = gates[s]
            xp.matmul(w_hh, hs[s], out=gt)
            gt += xw[s]
            xp.tanh(gt, out=gt)
            gt *= a
            gt += b
            c = cs[s + 1]
            xp.multiply(gt[H : 2 * H], cs[s], out=c)
            xp.multiply(gt[:H], gt[2 * H : 3 * H], out=tmp)
            c += tmp
            tc = xp.tanh(c, out=tcs[s])
            if hr is None:
                xp.multiply(gt[3 * H :], tc, out=hs[s + 1])
            else:
                xp.matmul(w_hr, xp.multiply(gt[3 * H :], tc, out=hr[s]), out=hs[s + 1])
            _hold((hs, cs), s, _ended(sizes, s, N))
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
        d = xp.empty((L, G, N), dt)
        dv = d.reshape(L, 4, H, N)
        dh_carry = dfinal[0].copy()
        dc = dfinal[1].copy()
        dh = xp.empty((H, N), dt)
        tmp = xp.empty((H, N), dt)
        w_hh_t = w_hh.T
        dproj = None if hr is None else xp.empty((L, w_hh.shape[1], N), dt)
        for s in range(L - 1, -1, -1):
            end = _ended(sizes, s, N)
            if dproj is None:
                dh = _dh_at(dh_carry, dout, s, xp, dh)
            else:  # through the projection: dh_raw = W_hr^T dh
                xp.matmul(w_hr.T, _dh_at(dh_carry, dout, s, xp, dproj[s]), out=dh)
            if end is not None:  # ended sequences pass their gradients through step s
                held_h = (dh if dproj is None else dproj[s])[:, end:].copy()
                held_c = dc[:, end:].copy()
            xp.multiply(dh, k[s], out=tmp)
            dc += tmp
            xp.multiply(qv[s, :3], dc, out=dv[s, :3])
            xp.multiply(qv[s, 3], dh, out=dv[s, 3])
            dc *= f[s]
            if end is not None:
                d[s][:, end:] = 0
                dc[:, end:] = held_c
                if dproj is not None:
                    dproj[s][:, end:] = 0
            xp.matmul(w_hh_t, d[s], out=dh_carry)
            if end is not None:
                dh_carry[:, end:] = held_h
        return d, d, [dh_carry, dc], dproj


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
        gates = xp.empty((L, G, N), dt)
        hg = xp.empty((L, G, N), dt)
        hs = xp.empty((L + 1, H, N), dt)
        hs[0] = states[0]
        for s in range(L):
            xs, hgs, gt = xw[s], hg[s], gates[s]
            xp.matmul(w_hh, hs[s], out=hgs)
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
            h = hs[s + 1]
            xp.subtract(hs[s], n, out=h)
            h *= gt[H : 2 * H]
            h += n
            _hold((hs,), s, _ended(sizes, s, N))
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
        dhg = xp.empty((L, G, N), dt)
        dxn = xp.empty((L, H, N), dt)
        dh_carry = dfinal[0].copy()
        dh = xp.empty((H, N), dt)
        tmp = xp.empty((H, N), dt)
        w_hh_t = w_hh.T
        for s in range(L - 1, -1, -1):
            dh = _dh_at(dh_carry, dout, s, xp, dh)
            dn = xp.multiply(dh, a1[s], out=dxn[s])
            xp.multiply(dn, r[s], out=dhg[s, 2 * H :])
            xp.multiply(dh, a2[s], out=dhg[s, H : 2 * H])
            xp.multiply(dn, a3[s], out=dhg[s, :H])
            end = _ended(sizes, s, N)
            if end is not None:  # ended sequences pass their gradient through step s
                dxn[s][:, end:] = 0
                dhg[s][:, end:] = 0
            xp.multiply(dh, z[s], out=dh_carry)
            xp.matmul(w_hh_t, dhg[s], out=tmp)
            dh_carry += tmp
            if end is not None:
                dh_carry[:, end:] = dh[:, end:]
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
            h = hs[s + 1]
            xp.matmul(w_hh, hs[s], out=h)
            h += xw[s]
            if self.relu:
                xp.maximum(h, 0, out=h)
            else:
                xp.tanh(h, out=h)
            _hold((hs,), s, _ended(sizes, s, N))
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
        d = xp.empty((L, H, N), y.dtype)
        dh_carry = dfinal[0].copy()
        dh = xp.empty((H, N), y.dtype)
        w_hh_t = w_hh.T
        for s in range(L - 1, -1, -1):
            dh = _dh_at(dh_carry, dout, s, xp, dh)
            xp.multiply(dh, deriv[s], out=d[s])
            end = _ended(sizes, s, N)
            if end is not None:  # ended sequences pass their gradient through step s
                d[s][:, end:] = 0
            xp.matmul(w_hh_t, d[s], out=dh_carry)
            if end is not None:
                dh_carry[:, end:] = dh[:, end:]
        return d, d, [dh_carry], None


CELLS: dict[str, Cell] = {
    "LSTM": LSTMCell(),
    "GRU": GRUCell(),
    "RNN_TANH": ElmanCell(False),
    "RNN_RELU": ElmanCell(True),
}
