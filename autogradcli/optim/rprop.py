"""Rprop: per-coordinate step sizes that grow while the gradient keeps its sign and shrink when
it flips; the step follows only the gradient's sign."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..tensor.tensor import wrap
from .optimizer import Optimizer, bump_step, new_step, params_with_grad, step_grad, to_scalar

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """PyTorch's ``torch.optim.Rprop``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        lr = to_scalar(lr)
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
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
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p, w, xp in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = new_step()
                    state["prev"] = wrap(xp.zeros_like(w))
                    state["step_size"] = wrap(xp.full_like(w, to_scalar(group["lr"])))
                bump_step(state["step"])
                g = step_grad(xp, w, p.grad._data, 0, group["maximize"], work)
                prev_t, size_t = state["prev"], state["step_size"]
                prev, size = prev_t._data, size_t._data
                sign = xp.multiply(g, prev, out=work.get(w, 1))
                xp.sign(sign, out=sign)
                factor = xp.where(sign > 0, etaplus, xp.where(sign < 0, etaminus, 1.0))
                sign[...] = factor
                xp.multiply(size, sign, out=size)
                xp.clip(size, step_size_min, step_size_max, out=size)
                # where the sign flipped, skip this step and forget the gradient
                xp.copyto(prev, g)
                prev[sign == etaminus] = 0
                upd = xp.sign(prev, out=work.get(w, 2))
                xp.negative(upd, out=upd)
                xp.multiply(upd, size, out=upd)
                xp.add(w, upd, out=w)
                prev_t._bump_version()
                size_t._bump_version()
                p._bump_version()
        return loss
