"""RAdam: Adam with the variance of the adaptive rate rectified (plain momentum SGD while the
approximated SMA length ``rho_t`` is at most 5)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .adam import lerp_, square_avg_
from .optimizer import (
    Optimizer,
    bump_step,
    check_adam_args,
    init_state,
    params_with_grad,
    step_grad,
    to_scalar,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """PyTorch's ``torch.optim.RAdam`` (``decoupled_weight_decay=True`` is RAdamW)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        lr = check_adam_args(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
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
            decoupled = group["decoupled_weight_decay"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    init_state(state, xp, w, "exp_avg", "exp_avg_sq")
                step = bump_step(state["step"])
                g = step_grad(xp, w, p.grad._data, 0 if decoupled else wd, group["maximize"], work)
                if decoupled and wd != 0:
                    xp.multiply(w, 1 - lr * wd, out=w)
                m_t, v_t = state["exp_avg"], state["exp_avg_sq"]
                m, v = m_t._data, v_t._data
                t1, t2 = work.get(w, 1), work.get(w, 2)
                lerp_(xp, m, g, 1 - beta1, t1)
                square_avg_(xp, v, g, beta2, t1)
                m_t._bump_version()
                v_t._bump_version()

                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                upd = xp.divide(m, bias_correction1, out=t2)
                xp.multiply(upd, lr, out=upd)
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    rect = (
                        (rho_t - 4)
                        * (rho_t - 2)
                        * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                    ) ** 0.5
                    adaptive = xp.sqrt(v, out=t1)
                    xp.add(adaptive, eps, out=adaptive)
                    xp.divide(bias_correction2**0.5, adaptive, out=adaptive)
                    xp.multiply(upd, adaptive, out=upd)
                    xp.multiply(upd, rect, out=upd)
                xp.subtract(w, upd, out=w)
                p._bump_version()
        return loss
