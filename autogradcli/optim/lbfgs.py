"""L-BFGS: quasi-Newton steps from a short history of parameter and gradient changes, over all
parameters flattened into one vector, with an optional strong-Wolfe line search."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..autograd.grad_mode import enable_grad
from ..backend import array_module
from ..tensor.tensor import Tensor, wrap
from .line_search import host_scalar, strong_wolfe
from .optimizer import Optimizer, to_scalar

__all__ = ["LBFGS"]

_ARRAY_LISTS = ("old_dirs", "old_stps")


class LBFGS(Optimizer):
    """PyTorch's ``torch.optim.LBFGS``: ``step(closure)`` runs up to ``max_iter`` iterations,
    each evaluating ``closure`` (which zeroes the grads, computes the loss, calls ``backward`` and
    returns the loss) once, or several times under ``line_search_fn="strong_wolfe"``.

    One parameter group only; the state (directions, history) lives under the first parameter
    and uses ``param_bytes * (history_size + 1)`` of memory, as in PyTorch.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        lr = to_scalar(lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    # ----------------------------------------------------------------- flat views
    def _gather_flat_grad(self) -> Any:
        views = []
        for p in self._params:
            w = p._data
            if p.grad is None:
                views.append(array_module(w).zeros(w.size, dtype=w.dtype))
            else:
                views.append(p.grad._data.reshape(-1))
        return array_module(views[0]).concatenate(views, 0)

    def _add_grad(self, step_size: Any, update: Any) -> None:
        """``p += step_size * update[slice of p]`` for every parameter."""
        offset = 0
        for p in self._params:
            w = p._data
            xp = array_module(w)
            piece = update[offset : offset + w.size].reshape(w.shape)
            xp.add(w, xp.multiply(piece, step_size), out=w)
            p._bump_version()
            offset += w.size

    def _clone_param(self) -> list[Any]:
        return [p._data.copy() for p in self._params]

    def _set_param(self, arrays: list[Any]) -> None:
        for p, a in zip(self._params, arrays):
            p._data[...] = a
            p._bump_version()

    def _directional_evaluate(
        self, closure: Callable[[], Any], x: list[Any], t: Any, d: Any
    ) -> tuple[float, Any]:
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # ----------------------------------------------------------------- the step
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; returns the closure's first loss."""
        if closure is None:
            raise RuntimeError(
                "LBFGS.step needs a closure that re-evaluates the model and returns the loss: "
                "optimizer.step(closure)"
            )

        def evaluate() -> Any:
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr = to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # the whole state is kept under the first parameter
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        xp = array_module(flat_grad)
        if host_scalar(abs(flat_grad).max()) <= tolerance_grad:  # already optimal
            return orig_loss

        d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss = self._load(state)

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the descent direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = host_scalar(y.dot(s))
                if ys > 1e-10:  # the curvature condition holds: remember this pair
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / host_scalar(y.dot(y))
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                # two-loop recursion: r = H g from the history and the diagonal H_diag
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = host_scalar(old_stps[i].dot(q)) * ro[i]
                    xp.add(q, xp.multiply(old_dirs[i], -al[i]), out=q)
                d = r = xp.multiply(q, H_diag)
                for i in range(num_old):
                    be_i = host_scalar(old_dirs[i].dot(r)) * ro[i]
                    xp.add(r, xp.multiply(old_stps[i], al[i] - be_i), out=r)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            # the step length: the first iteration ever is scaled by the gradient's size
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / host_scalar(abs(flat_grad).sum())) * lr
            else:
                t = lr

            gtd = host_scalar(flat_grad.dot(d))
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: list[Any], t: Any, d: Any) -> tuple[float, Any]:
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = host_scalar(abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # re-evaluate only when another iteration follows
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = host_scalar(abs(flat_grad).max()) <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if host_scalar(abs(d * t).max()) <= tolerance_change:  # lack of progress
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        self._save(state, d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss)
        return orig_loss

    # ----------------------------------------------------------------- state as tensors
    @staticmethod
    def _load(state: dict[str, Any]) -> tuple[Any, ...]:
        """The iteration's variables from ``state`` (Tensors there, arrays and scalars here)."""

        def arr(v: Any) -> Any:
            return v._data if isinstance(v, Tensor) else v

        def scalar(v: Any) -> Any:
            return host_scalar(v._data) if isinstance(v, Tensor) else v

        lists = {
            k: None if state.get(k) is None else [arr(v) for v in state[k]] for k in _ARRAY_LISTS
        }
        ro = None if state.get("ro") is None else [scalar(v) for v in state["ro"]]
        if "al" in state:
            state["al"] = [None if v is None else scalar(v) for v in state["al"]]
        return (
            arr(state.get("d")),
            scalar(state.get("t")),
            lists["old_dirs"],
            lists["old_stps"],
            ro,
            scalar(state.get("H_diag")),
            arr(state.get("prev_flat_grad")),
            state.get("prev_loss"),
        )

    @staticmethod
    def _save(
        state: dict[str, Any],
        d: Any,
        t: Any,
        old_dirs: Any,
        old_stps: Any,
        ro: Any,
        H_diag: Any,
        prev_flat_grad: Any,
        prev_loss: Any,
    ) -> None:
        """Store the iteration's variables as PyTorch does: Tensors (0-d ones for scalars of the
        parameters' dtype), Python numbers where PyTorch keeps numbers."""

        def box(v: Any) -> Any:
            if isinstance(v, np.generic):
                return wrap(np.asarray(v))
            return v if v is None or isinstance(v, (int, float)) else wrap(v)

        state["d"] = box(d)
        state["t"] = box(t)
        state["old_dirs"] = None if old_dirs is None else [box(v) for v in old_dirs]
        state["old_stps"] = None if old_stps is None else [box(v) for v in old_stps]
        state["ro"] = None if ro is None else [box(v) for v in ro]
        state["H_diag"] = box(H_diag)
        state["prev_flat_grad"] = box(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if "al" in state:
            state["al"] = [box(v) for v in state["al"]]
