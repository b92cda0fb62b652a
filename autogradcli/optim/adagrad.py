"""Adagrad: per-coordinate steps scaled by the root of the summed squared gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..backend import array_module
from ..tensor.tensor import Tensor, wrap
from .optimizer import (
    Optimizer,
    bump_step,
    new_step,
    params_with_grad,
    step_grad,
    to_scalar,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """PyTorch's ``torch.optim.Adagrad`` (state is created for every parameter at construction)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        lr = to_scalar(lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not lr_decay >= 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not initial_accumulator_value >= 0.0:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[p]
        state["step"] = new_step()
        xp = array_module(p._data)
        state["sum"] = wrap(xp.full_like(p._data, group["initial_accumulator_value"]))
        return state

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        work = self._work
        for group in self.param_groups:
            lr = to_scalar(group["lr"])
            lr_decay, eps = group["lr_decay"], group["eps"]
            wd, maximize = group["weight_decay"], group["maximize"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:  # a parameter added by add_param_group
                    state = self._init_state(p, group)
                step = bump_step(state["step"])
                g = step_grad(xp, w, p.grad._data, wd, maximize, work)
                clr = lr / (1 + (step - 1) * lr_decay)
                sum_t = state["sum"]
                s = sum_t._data
                t1, t2 = work.get(w, 1), work.get(w, 2)
                xp.add(s, xp.multiply(g, g, out=t1), out=s)
                sum_t._bump_version()
                std = xp.sqrt(s, out=t1)
                xp.add(std, eps, out=std)
                upd = xp.multiply(g, -clr, out=t2)
                xp.add(w, xp.divide(upd, std, out=upd), out=w)
                p._bump_version()
        return loss
