"""Adadelta: steps scaled by the ratio of running RMS of past updates to that of gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .adam import square_avg_
from .optimizer import (
    Optimizer,
    bump_step,
    init_state,
    params_with_grad,
    step_grad,
    to_scalar,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """PyTorch's ``torch.optim.Adadelta`` (``lr`` scales the step, 1.0 by default)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        lr = to_scalar(lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        work = self._work
        for group in self.param_groups:
            lr = to_scalar(group["lr"])
            rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    init_state(state, xp, w, "square_avg", "acc_delta")
                bump_step(state["step"])
                g = step_grad(xp, w, p.grad._data, wd, group["maximize"], work)
                sq_t, acc_t = state["square_avg"], state["acc_delta"]
                sq, acc = sq_t._data, acc_t._data
                t1, t2 = work.get(w, 1), work.get(w, 2)
                square_avg_(xp, sq, g, rho, t1)
                std = xp.add(sq, eps, out=t1)
                xp.sqrt(std, out=std)
                delta = xp.add(acc, eps, out=t2)
                xp.sqrt(delta, out=delta)
                xp.divide(delta, std, out=delta)
                xp.multiply(delta, g, out=delta)
                square_avg_(xp, acc, delta, rho, t1)
                sq_t._bump_version()
                acc_t._bump_version()
                xp.add(w, xp.multiply(delta, -lr, out=delta), out=w)
                p._bump_version()
        return loss
