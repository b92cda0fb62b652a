"""Adam (and the engine of AdamW): bias-corrected moment estimates, optional AMSGrad."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from ..backend.kernels import adam_kernel, lerp
from ..ops.complex_numbers import real_view
from .optimizer import (
    Optimizer,
    bump_step,
    check_adam_args,
    init_state,
    params_with_grad,
    to_scalar,
)

__all__ = ["Adam", "lerp_", "square_avg_"]


def lerp_(xp: Any, dst: Any, end: Any, weight: float, tmp: Any) -> None:
    """``dst.lerp_(end, weight)`` with PyTorch's two-sided formula (``tmp`` is scratch)."""
    small = abs(weight) < 0.5
    lerp(xp, dst, end, weight if small else 1 - weight, tmp, not small)


def square_avg_(xp: Any, avg: Any, x: Any, decay: float, tmp: Any) -> None:
    """``avg.mul_(decay).addcmul_(x, x, value=1 - decay)`` in place, rounded as PyTorch's
    (``x * (1 - decay)`` first, then times ``x``); ``tmp`` is scratch."""
    xp.multiply(avg, decay, out=avg)
    xp.multiply(x, 1 - decay, out=tmp)
    xp.multiply(tmp, x, out=tmp)
    xp.add(avg, tmp, out=avg)


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
            decay = wd != 0
            weight = 1 - beta1  # of m.lerp_(g, weight): the side is fixed per group
            small = abs(weight) < 0.5
            coef = weight if small else 1 - weight
            kernel = adam_kernel(
                maximize, decay and not decoupled, decay and decoupled, not small, amsgrad
            )
            keep_w, one_minus_beta2 = 1 - lr * wd, 1 - beta2
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    max_sq = "max_exp_avg_sq" if amsgrad else None
                    init_state(state, xp, w, "exp_avg", "exp_avg_sq", max_sq)
                step = bump_step(state["step"])
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                m_t, v_t = state["exp_avg"], state["exp_avg_sq"]
                vmax_t = state["max_exp_avg_sq"] if amsgrad else None
                # a complex parameter is updated as pairs of reals, as in PyTorch
                w_r = real_view(w)
                kernel.on[xp](
                    partial(work.get, w_r),
                    w_r,
                    real_view(p.grad._data),
                    real_view(m_t._data),
                    real_view(v_t._data),
                    None if vmax_t is None else real_view(vmax_t._data),
                    wd,
                    keep_w,
                    coef,
                    beta2,
                    one_minus_beta2,
                    bias_correction2_sqrt,
                    eps,
                    -step_size,
                )
                m_t._bump_version()
                v_t._bump_version()
                if vmax_t is not None:
                    vmax_t._bump_version()
                p._bump_version()
        return loss
