"""``Optimizer``: PyTorch's optimizer base (param groups, per-parameter state, state dicts).

The concrete optimizers update parameters in place on their arrays (``p._data``) with the backend's
ufuncs and ``out=`` into reusable scratch buffers, so a step records no graph, allocates next to
nothing, and bumps each parameter's version counter like PyTorch's in-place updates do.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

import numpy as np

from ..autograd.grad_mode import enable_grad
from ..backend import array_module, device_of, to_device
from ..backend.kernels import decayed_grad
from ..tensor.tensor import Tensor, wrap

__all__ = ["Optimizer", "check_flags", "required"]


class _RequiredParameter:
    """Marks a default that every param group must supply (PyTorch's ``optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return f"autogradcli.{obj.dtype.name.capitalize()}Tensor"
    kind = type(obj)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def to_scalar(value: Any) -> float:
    """A hyperparameter as a Python number (a one-element tensor is accepted, as in PyTorch)."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        return float(value.item())
    return value


def new_step() -> Tensor:
    """The ``step`` counter of PyTorch's adaptive optimizers: a float32 scalar tensor on the CPU."""
    return wrap(np.zeros((), dtype=np.float32))


def bump_step(step: Tensor) -> float:
    """``step += 1`` in place; the new count as a Python float."""
    arr = step._data
    arr += 1
    step._bump_version()
    return float(arr)


def params_with_grad(group: dict[str, Any]) -> Iterator[tuple[Tensor, Any, Any]]:
    """``(p, p._data, its array module)`` for each parameter of ``group`` that has a gradient."""
    for p in group["params"]:
        if p.grad is not None:
            w = p._data
            yield p, w, array_module(w)


def init_state(state: dict[str, Any], xp: Any, w: Any, *buffers: str | None) -> None:
    """A first step's state: the ``step`` counter, then a zero tensor like ``w`` per named buffer
    (``None`` names are skipped)."""
    state["step"] = new_step()
    for name in buffers:
        if name is not None:
            state[name] = wrap(xp.zeros_like(w))


def check_adam_args(lr: Any, betas: tuple[float, float], eps: float, weight_decay: float) -> Any:
    """The Adam family's constructor checks, in PyTorch's order and words; ``lr`` as a number."""
    lr = to_scalar(lr)
    if not lr >= 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not eps >= 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not weight_decay >= 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    return lr


_UNSUPPORTED_FLAGS = {
    "fused": "each optimizer has one update path, chosen without this flag: whole-array "
    "operations over every parameter (the foreach path), which CUDA runs as fused kernels for "
    "SGD, Adam and AdamW. Leave fused unset",
    "differentiable": "optimizer steps update parameter arrays in place outside autograd, so a "
    "step cannot be differentiated through. Leave differentiable=False",
    "capturable": "it prepares a step for CUDA-graph capture, which autogradcli does not have. "
    "Leave capturable=False",
}


def check_flags(group: dict[str, Any]) -> None:
    """Refuse the implementation flags autogradcli cannot honour (``fused``, ``differentiable``,
    ``capturable`` set to True) with a clear error; ``foreach`` is accepted (see ``Optimizer``)."""
    for flag, why in _UNSUPPORTED_FLAGS.items():
        if group.get(flag):
            raise ValueError(f"{flag}=True is not supported: {why}.")
    foreach = group.get("foreach")
    if foreach is not None and not isinstance(foreach, bool):
        raise TypeError(f"foreach must be None, True or False, got {foreach!r}")


def step_grad(xp: Any, w: Any, g: Any, weight_decay: float, maximize: bool, work: Any) -> Any:
    """The gradient array a step follows: ``g`` negated under ``maximize``, plus
    ``weight_decay * w`` (L2 decay); ``g`` itself when neither applies, else scratch slot 0."""
    return decayed_grad(xp, partial(work.get, w), w, g, weight_decay, maximize, weight_decay != 0)


class _Workspace:
    """Scratch arrays reused across steps, one set per (array type, device, shape, dtype)."""

    __slots__ = ("_bufs",)

    def __init__(self) -> None:
        self._bufs: dict[tuple[Any, ...], Any] = {}

    def get(self, like: Any, slot: int) -> Any:
        if type(like) is np.ndarray:
            key = (slot, like.shape, like.dtype)
        else:
            key = (slot, like.shape, like.dtype, type(like), str(device_of(like)))
        buf = self._bufs.get(key)
        if buf is None:
            buf = self._bufs[key] = array_module(like).empty_like(like)
        return buf


class Optimizer:
    """Base class of all optimizers.

    ``params`` is an iterable of tensors, or of dicts (param groups) each with a ``"params"`` entry
    and optional per-group overrides of ``defaults``.

    ``foreach`` (None, True or False) is accepted and changes nothing: the one update path is
    PyTorch's foreach idea already, each parameter updated by a few whole-array operations into
    reused buffers, and its results equal PyTorch's foreach and for-loop paths to rounding.
    ``fused``, ``differentiable`` and ``capturable`` set to True are refused with a ValueError.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + _typename(params)
            )
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        self._work = _Workspace()
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ----------------------------------------------------------------- groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with optional hyperparameter overrides) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in param_group["params"]]
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names

        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + _typename(p)
                )
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        check_flags(param_group)

        ids = {id(p) for p in tensors}
        if len(ids) != len(tensors):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. cannot add param "
                    f"group {which} to the optimizer"
                )
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ----------------------------------------------------------------- steps
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to None by default, else to zeros)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g._data.fill(0)
                g._bump_version()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        raise NotImplementedError

    @staticmethod
    def _eval_closure(closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # ----------------------------------------------------------------- state dicts
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {param index: {...}}, "param_groups": [{..., "params": [indices]}]}``."""
        mapping: dict[int, int] = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()``: hyperparameters per group and per-parameter state (copied)."""
        groups = self.param_groups
        import copy  # not at import: only loading a state needs it

        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = {
            saved_id: p
            for g, s in zip(groups, saved_groups)
            for saved_id, p in zip(s["params"], g["params"])
        }
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
        self.state = state
        self.param_groups = saved_groups

    def __getstate__(self) -> dict[str, Any]:
        """What copying an optimizer keeps (PyTorch's three attributes)."""
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore ``__getstate__``'s attributes; subclasses fill defaults new since then here."""
        self.__dict__.update(state)
        self._work = _Workspace()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"


def _cast(param: Tensor, value: Any, key: Any = None) -> Any:
    """A copy of saved state for ``param``: tensors copied onto its device (and float dtype).

    ``step`` counters keep their own dtype and device, as in PyTorch.
    """
    if isinstance(value, Tensor):
        arr = value._data
        if key != "step":
            if param._data.dtype.kind in "fV" and arr.dtype.kind in "fV":
                arr = arr.astype(param._data.dtype, copy=False)
            arr = to_device(arr, param.device)
        return wrap(arr.copy())
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v) for v in value)
    return value
