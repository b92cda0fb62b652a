"""Stochastic gradient descent with momentum, dampening, Nesterov, weight decay and maximize."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..tensor.tensor import wrap
from .optimizer import Optimizer, params_with_grad, step_grad, to_scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """PyTorch's ``torch.optim.SGD``: the first momentum buffer is the gradient itself, and
    dampening applies from the second step on."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        lr = to_scalar(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; returns the closure's loss if one is given."""
        loss = self._eval_closure(closure)
        work = self._work
        for group in self.param_groups:
            lr = to_scalar(group["lr"])
            momentum = group["momentum"]
            dampening = group["dampening"]
            wd = group["weight_decay"]
            nesterov = group["nesterov"]
            maximize = group["maximize"]
            for p, w, xp in params_with_grad(group):
                g = step_grad(xp, w, p.grad._data, wd, maximize, work)
                if momentum != 0:
                    state = self.state[p]
                    buf_t = state.get("momentum_buffer")
                    if buf_t is None:
                        state["momentum_buffer"] = buf_t = wrap(g.copy())
                        buf = buf_t._data
                    else:
                        buf = buf_t._data
                        xp.multiply(buf, momentum, out=buf)
                        if dampening == 0:
                            xp.add(buf, g, out=buf)
                        else:
                            tmp = xp.multiply(g, 1 - dampening, out=work.get(w, 2))
                            xp.add(buf, tmp, out=buf)
                        buf_t._bump_version()
                    if nesterov:
                        tmp = xp.multiply(buf, momentum, out=work.get(w, 2))
                        g = xp.add(g, tmp, out=tmp)
                    else:
                        g = buf
                upd = xp.multiply(g, -lr, out=work.get(w, 3))
                xp.add(w, upd, out=w)
                p._bump_version()
        return loss
