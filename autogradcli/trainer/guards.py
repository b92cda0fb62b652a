"""``NonFiniteGuard``: stop at the first non-finite training loss and say why.

It listens to ``on_before_backward`` (the loss the trainer has just read), so the failing step
never reaches ``backward``/``optimizer.step``. The diagnosis (a second forward of that one batch
with hooks on every module) runs only after a failure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd.grad_mode import no_grad
from ..backend import array_module
from ..tensor.tensor import Tensor
from .callbacks import Callback

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = ["NonFiniteGuard", "NonFiniteLossError", "find_nonfinite_layer"]


class NonFiniteLossError(RuntimeError):
    """The training loss became NaN/inf; the message says where (epoch, step, layer)."""

    def __init__(self, message: str, epoch: int, step: int, layer: str | None) -> None:
        super().__init__(message)
        self.epoch, self.step, self.layer = epoch, step, layer


def _nonfinite_kind(arr: Any) -> str | None:
    """``"nan"``/``"inf"``/``"-inf"`` for the first kind of non-finite value in ``arr``."""
    if arr.dtype.kind not in "fcV":
        return None
    xp = array_module(arr)
    if bool(xp.isfinite(arr).all()):
        return None
    if bool(xp.isnan(arr).any()):
        return "nan"
    return "inf" if bool((arr == xp.inf).any()) else "-inf"


def _first_nonfinite(value: Any) -> str | None:
    if isinstance(value, Tensor):
        return _nonfinite_kind(value._data)
    if isinstance(value, (tuple, list)):
        for v in value:
            kind = _first_nonfinite(v)
            if kind:
                return kind
    if isinstance(value, dict):
        return _first_nonfinite(list(value.values()))
    return None


def find_nonfinite_layer(model: Any, inputs: Any) -> tuple[str, Any, str, str] | None:
    """Run ``model(inputs)`` (no grad) with forward hooks on every module and return
    ``(name, module, "input"|"output"|"weight", kind)`` for the first module (in completion
    order, so the innermost) whose output is non-finite; ``("", None, "input", kind)`` when the
    input itself is; None when every output is finite."""
    kind = _first_nonfinite(inputs)
    if kind:
        return ("", None, "input", kind)
    found: list[tuple[str, Any, str, str]] = []
    handles = []

    def make_hook(name: str) -> Callable:
        def hook(module: Any, args: Any, output: Any) -> None:
            if found:
                return
            bad = _first_nonfinite(output)
            if bad:
                where = "output"
                for p in module.parameters(recurse=False):
                    if _first_nonfinite(p):
                        where, bad = "weight", _first_nonfinite(p)
                        break
                found.append((name, module, where, bad))

        return hook

    try:
        for name, module in model.named_modules():
            handles.append(module.register_forward_hook(make_hook(name)))
        with no_grad():
            model(*inputs) if isinstance(inputs, tuple) else model(inputs)
    except Exception:
        pass
    finally:
        for h in handles:
            h.remove()
    return found[0] if found else None


def _largest(value: Any) -> float | None:
    if not isinstance(value, Tensor) or value._data.dtype.kind not in "fcV" or not value.numel():
        return None
    xp = array_module(value._data)
    return float(xp.abs(value._data).max())


class NonFiniteGuard(Callback):
    """Stop the run (status failed) at the first non-finite training loss, before that step's
    backward, naming the layer whose output first went non-finite, or saying that the model
    diverged (finite outputs and targets: the loss grew from X to inf over N steps)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.lowest: float | None = None  # the lowest finite training loss so far
        self.lowest_step = 0

    def on_before_backward(self, trainer: Trainer, loss: Any) -> None:
        value = trainer.batch_loss
        if value is None or not self.enabled:
            return
        if math.isfinite(value):
            if self.lowest is None or value <= self.lowest:
                self.lowest, self.lowest_step = value, trainer.global_step + 1
            return
        raise self.diagnose(trainer, value)

    def diagnose(self, trainer: Trainer, value: float) -> NonFiniteLossError:
        x, y = trainer.batch
        kind = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        step = trainer.global_step + 1
        head = f"non-finite loss ({kind}) at epoch {trainer.epoch}, step {step}"
        found = find_nonfinite_layer(trainer.model, x)
        layer = None
        if found is not None:
            name, module, where, bad = found
            layer = name
            if module is None:
                tail = f"the input batch already contains {bad}"
            else:
                label = f"layer '{name}'" if name else "the model"
                label += f" ({type(module).__name__})"
                if where == "weight":
                    tail = f"first produced by {label}: its parameters contain {bad}"
                else:
                    tail = f"first produced by {label} output"
                if self.lowest is not None and not _first_nonfinite(y):
                    tail += (
                        f" ({self._grew(kind, step)}: lower the learning rate or clip gradients)"
                    )
        elif _first_nonfinite(y):
            tail = f"the targets of this batch contain {_first_nonfinite(y)}: check the data"
        else:
            tail = self._diverged(trainer, kind, step)
        return NonFiniteLossError(f"{head}: {tail}", trainer.epoch, step, layer)

    def _diverged(self, trainer: Trainer, kind: str, step: int) -> str:
        loss_name = type(trainer.loss_fn).__name__
        with no_grad():
            x = trainer.batch[0]
            out = trainer.model(*x) if isinstance(x, tuple) else trainer.model(x)
        big = _largest(out)
        size = f" (outputs up to {big:.3g} in magnitude)" if big is not None else ""
        if self.lowest is not None:
            grew = self._grew(kind, step)
        else:
            grew = f"{loss_name} is {kind} at the first step"
        return (
            f"the model diverged: {grew}; the model's outputs and the targets are finite{size}. "
            "Lower the learning rate or clip gradients (train.grad_clip)"
        )

    def _grew(self, kind: str, step: int) -> str:
        return (
            f"the loss grew from {self.lowest:.4g} (step {self.lowest_step}) to {kind} "
            f"over {step - self.lowest_step} steps"
        )

    def state_dict(self) -> dict[str, Any]:
        return {"lowest": self.lowest, "lowest_step": self.lowest_step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.lowest, self.lowest_step = state.get("lowest"), int(state.get("lowest_step", 0))

    def __repr__(self) -> str:
        return f"NonFiniteGuard(enabled={self.enabled})"
