"""NAdam: Adam with Nesterov momentum and a momentum schedule (``momentum_decay``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..tensor.tensor import wrap
from .adam import lerp_, square_avg_
from .optimizer import (
    Optimizer,
    bump_step,
    check_adam_args,
    new_step,
    params_with_grad,
    step_grad,
    to_scalar,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """PyTorch's ``torch.optim.NAdam`` (``decoupled_weight_decay=True`` is NAdamW).

    ``mu_product`` (the product of the momentum schedule) is a float32 scalar, as in PyTorch."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        lr = check_adam_args(lr, betas, eps, weight_decay)
        if not momentum_decay >= 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
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
            momentum_decay = group["momentum_decay"]
            decoupled = group["decoupled_weight_decay"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = new_step()
                    state["mu_product"] = wrap(np.ones((), dtype=np.float32))
                    state["exp_avg"] = wrap(xp.zeros_like(w))
                    state["exp_avg_sq"] = wrap(xp.zeros_like(w))
                step = bump_step(state["step"])
                bias_correction2 = 1 - beta2**step
                g = step_grad(xp, w, p.grad._data, 0 if decoupled else wd, group["maximize"], work)
                if decoupled and wd != 0:
                    xp.multiply(w, 1 - lr * wd, out=w)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mp_t = state["mu_product"]
                mp_t._data *= mu
                mp_t._bump_version()
                mu_product = float(mp_t._data.item())
                mu_product_next = mu_product * mu_next

                m_t, v_t = state["exp_avg"], state["exp_avg_sq"]
                m, v = m_t._data, v_t._data
                t1, t2 = work.get(w, 1), work.get(w, 2)
                lerp_(xp, m, g, 1 - beta1, t1)
                square_avg_(xp, v, g, beta2, t1)
                m_t._bump_version()
                v_t._bump_version()

                denom = xp.divide(v, bias_correction2, out=t1)
                xp.sqrt(denom, out=denom)
                xp.add(denom, eps, out=denom)
                upd = xp.multiply(g, -lr * (1.0 - mu) / (1.0 - mu_product), out=t2)
                xp.add(w, xp.divide(upd, denom, out=upd), out=w)
                upd = xp.multiply(m, (-lr * mu_next) / (1.0 - mu_product_next), out=t2)
                xp.add(w, xp.divide(upd, denom, out=upd), out=w)
                p._bump_version()
        return loss
