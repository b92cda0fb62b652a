"""ASGD: SGD with a decaying step (``eta``) and a running average of the iterates (``ax``),
averaging from step ``t0`` on."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..tensor.tensor import wrap
from .optimizer import Optimizer, bump_step, new_step, params_with_grad, step_grad, to_scalar

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """PyTorch's ``torch.optim.ASGD``; ``eta`` and ``mu`` are float32 scalars, as in PyTorch."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        lr = to_scalar(lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        work = self._work
        for group in self.param_groups:
            lr = to_scalar(group["lr"])
            lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = new_step()
                    state["eta"] = wrap(np.asarray(lr, dtype=np.float32))
                    state["mu"] = wrap(np.ones((), dtype=np.float32))
                    state["ax"] = wrap(xp.zeros_like(w))
                step = bump_step(state["step"])
                g = step_grad(xp, w, p.grad._data, group["weight_decay"], group["maximize"], work)
                eta_t, mu_t, ax_t = state["eta"], state["mu"], state["ax"]
                eta = float(eta_t._data.item())
                xp.multiply(w, 1 - lambd * eta, out=w)
                xp.add(w, xp.multiply(g, -eta, out=work.get(w, 1)), out=w)
                mu = float(mu_t._data.item())
                ax = ax_t._data
                if mu != 1:
                    diff = xp.subtract(w, ax, out=work.get(w, 1))
                    xp.add(ax, xp.multiply(diff, mu, out=diff), out=ax)
                else:
                    xp.copyto(ax, w)
                eta_t._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
                mu_t._data[...] = 1 / max(1, step - t0)
                for t in (eta_t, mu_t, ax_t, p):
                    t._bump_version()
        return loss
