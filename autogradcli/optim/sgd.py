"""Stochastic gradient descent with momentum, dampening, Nesterov, weight decay and maximize."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from ..backend.kernels import sgd_kernel
from ..tensor.tensor import wrap
from .optimizer import Optimizer, params_with_grad, to_scalar

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
            decay, damped = wd != 0, dampening != 0
            kernel = sgd_kernel(maximize, decay, "next" if momentum else "none", damped, nesterov)
            neg_lr, keep = -lr, 1 - dampening
            for p, w, xp in params_with_grad(group):
                buf, k = None, kernel
                if momentum != 0:
                    state = self.state[p]
                    buf_t = state.get("momentum_buffer")
                    if buf_t is None:  # the first buffer is the gradient itself
                        state["momentum_buffer"] = buf_t = wrap(xp.empty_like(w))
                        k = sgd_kernel(maximize, decay, "first", damped, nesterov)
                    else:
                        buf_t._bump_version()
                    buf = buf_t._data
                k.on[xp](partial(work.get, w), w, p.grad._data, buf, wd, momentum, keep, neg_lr)
                p._bump_version()
        return loss
