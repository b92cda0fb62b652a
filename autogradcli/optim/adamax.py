"""Adamax: Adam with the infinity norm (a decaying running maximum of ``|grad|``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .adam import lerp_
from .optimizer import (
    Optimizer,
    bump_step,
    check_adam_args,
    init_state,
    params_with_grad,
    step_grad,
    to_scalar,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """PyTorch's ``torch.optim.Adamax``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        lr = check_adam_args(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
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
            beta1, beta2 = (to_scalar(b) for b in group["betas"])
            eps, wd = group["eps"], group["weight_decay"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    init_state(state, xp, w, "exp_avg", "exp_inf")
                step = bump_step(state["step"])
                g = step_grad(xp, w, p.grad._data, wd, group["maximize"], work)
                m_t, u_t = state["exp_avg"], state["exp_inf"]
                m, u = m_t._data, u_t._data
                t1, t2 = work.get(w, 1), work.get(w, 2)
                lerp_(xp, m, g, 1 - beta1, t1)
                xp.multiply(u, beta2, out=u)
                xp.abs(g, out=t1)
                xp.add(t1, eps, out=t1)
                xp.maximum(u, t1, out=u)
                m_t._bump_version()
                u_t._bump_version()
                clr = lr / (1 - beta1**step)
                upd = xp.multiply(m, -clr, out=t2)
                xp.add(w, xp.divide(upd, u, out=upd), out=w)
                p._bump_version()
        return loss
