"""RMSprop: a running average of squared gradients scales the step; optional centering and
momentum."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .adam import lerp_, square_avg_
from .optimizer import (
    Optimizer,
    bump_step,
    init_state,
    params_with_grad,
    step_grad,
    to_scalar,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """PyTorch's ``torch.optim.RMSprop``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        lr = to_scalar(lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not momentum >= 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not alpha >= 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        work = self._work
        for group in self.param_groups:
            lr = to_scalar(group["lr"])
            alpha, eps = group["alpha"], group["eps"]
            wd, momentum = group["weight_decay"], group["momentum"]
            centered, maximize = group["centered"], group["maximize"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    buf = "momentum_buffer" if momentum > 0 else None
                    init_state(state, xp, w, "square_avg", buf, "grad_avg" if centered else None)
                bump_step(state["step"])
                g = step_grad(xp, w, p.grad._data, wd, maximize, work)
                sq_t = state["square_avg"]
                sq = sq_t._data
                t1, t2 = work.get(w, 1), work.get(w, 2)
                square_avg_(xp, sq, g, alpha, t1)
                sq_t._bump_version()
                if centered:
                    ga_t = state["grad_avg"]
                    ga = ga_t._data
                    lerp_(xp, ga, g, 1 - alpha, t1)
                    ga_t._bump_version()
                    xp.negative(ga, out=t1)
                    xp.multiply(t1, ga, out=t1)
                    avg = xp.add(sq, t1, out=t1)
                    xp.sqrt(avg, out=avg)
                else:
                    avg = xp.sqrt(sq, out=t1)
                xp.add(avg, eps, out=avg)
                if momentum > 0:
                    buf_t = state["momentum_buffer"]
                    buf = buf_t._data
                    xp.multiply(buf, momentum, out=buf)
                    xp.add(buf, xp.divide(g, avg, out=t2), out=buf)
                    buf_t._bump_version()
                    xp.add(w, xp.multiply(buf, -lr, out=t2), out=w)
                else:
                    upd = xp.multiply(g, -lr, out=t2)
                    xp.add(w, xp.divide(upd, avg, out=upd), out=w)
                p._bump_version()
        return loss
