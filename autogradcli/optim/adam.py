"""Adam (and the engine of AdamW): bias-corrected moment estimates, optional AMSGrad."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import (
    Optimizer,
    bump_step,
    check_adam_args,
    init_state,
    params_with_grad,
    step_grad,
    to_scalar,
)

__all__ = ["Adam", "lerp_"]


def lerp_(xp: Any, dst: Any, end: Any, weight: float, tmp: Any) -> None:
    """``dst.lerp_(end, weight)`` with PyTorch's two-sided formula (``tmp`` is scratch)."""
    xp.subtract(end, dst, out=tmp)
    if abs(weight) < 0.5:
        xp.multiply(tmp, weight, out=tmp)
        xp.add(dst, tmp, out=dst)
    else:
        xp.multiply(tmp, 1 - weight, out=tmp)
        xp.subtract(end, tmp, out=dst)


class Adam(Optimizer):
    """PyTorch's ``torch.optim.Adam`` (``decoupled_weight_decay=True`` is AdamW)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        lr = check_adam_args(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": (to_scalar(betas[0]), to_scalar(betas[1])),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        work = self._work
        for group in self.param_groups:
            lr = to_scalar(group["lr"])
            beta1, beta2 = (to_scalar(b) for b in group["betas"])
            eps = group["eps"]
            wd = group["weight_decay"]
            amsgrad = group["amsgrad"]
            maximize = group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    max_sq = "max_exp_avg_sq" if amsgrad else None
                    init_state(state, xp, w, "exp_avg", "exp_avg_sq", max_sq)
                step = bump_step(state["step"])
                g = step_grad(xp, w, p.grad._data, 0 if decoupled else wd, maximize, work)
                if decoupled and wd != 0:
                    xp.multiply(w, 1 - lr * wd, out=w)
                m_t, v_t = state["exp_avg"], state["exp_avg_sq"]
                m, v = m_t._data, v_t._data
                t1, t2 = work.get(w, 1), work.get(w, 2)
                lerp_(xp, m, g, 1 - beta1, t1)
                xp.multiply(v, beta2, out=v)
                xp.multiply(g, 1 - beta2, out=t1)
                xp.multiply(t1, g, out=t1)
                xp.add(v, t1, out=v)
                m_t._bump_version()
                v_t._bump_version()

                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                if amsgrad:
                    vmax_t = state["max_exp_avg_sq"]
                    xp.maximum(vmax_t._data, v, out=vmax_t._data)
                    vmax_t._bump_version()
                    v = vmax_t._data
                denom = xp.sqrt(v, out=t1)
                xp.divide(denom, bias_correction2_sqrt, out=denom)
                xp.add(denom, eps, out=denom)
                upd = xp.multiply(m, -step_size, out=t2)
                xp.divide(upd, denom, out=upd)
                xp.add(w, upd, out=w)
                p._bump_version()
        return loss
