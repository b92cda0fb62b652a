"""FSDP's optimizer state dicts: the optimizer's own ``state_dict()`` with each parameter index
replaced by the parameter's dotted name in the unwrapped model (PyTorch's form: ``state``
sorted by name, ``param_groups`` in the optimizer's order), and back for loading."""

from __future__ import annotations

import warnings
from typing import Any

from ...nn.module import Module
from ..process_group import _require
from ._names import clean_name


def _ordered_names(model: Module, optim: Any) -> list[tuple[int, str]]:
    """(FSDP unit position, unwrapped name) of each of ``optim``'s parameters, in its
    state-dict index order; PyTorch lists the state unit by unit, by name within a unit."""
    from .fully_sharded_data_parallel import unit_order

    unit = unit_order(model)
    names = {
        id(p): (unit.get(id(p), 0), clean_name(n))
        for n, p in model.named_parameters(remove_duplicate=False)
    }
    return [names[id(p)] for g in optim.param_groups for p in g["params"]]


def _rank(model: Module, group: Any) -> int:
    """This rank in ``group``, else in the group the model's root FSDP unit averages over."""
    if group is None:
        for m in model.modules():
            sync = m.__dict__.get("_sync") or m.__dict__.get("_fsdp_sync")
            if sync is not None:
                return sync.pg.rank
    return _require(group).rank


def _legacy(curr: str, new: str) -> None:
    warnings.warn(  # PyTorch's words
        f"``FullyShardedDataParallel.{curr}``is being deprecated and is replaced by "
        f"``FullyShardedDataParallel.{new}``. ``FullyShardedDataParallel.{curr}`` may be "
        "removed after PyTorch 2.2.",
        FutureWarning,
        stacklevel=3,
    )


def _to_names(osd: dict[str, Any], keys: list[tuple[int, str]]) -> dict[str, Any]:
    state = {keys[i][1]: v for i, v in sorted(osd["state"].items(), key=lambda kv: keys[kv[0]])}
    groups = [{**g, "params": [keys[i][1] for i in g["params"]]} for g in osd["param_groups"]]
    return {"state": state, "param_groups": groups}


def _to_indices(osd: dict[str, Any], keys: list[tuple[int, str]]) -> dict[str, Any]:
    index = {n: i for i, (_, n) in enumerate(keys)}
    state = {index[n]: v for n, v in osd["state"].items()}
    groups = [{**g, "params": [index[n] for n in g["params"]]} for g in osd["param_groups"]]
    return {"state": dict(sorted(state.items())), "param_groups": groups}


def optim_state_dict(
    model: Module, optim: Any, optim_state_dict: dict[str, Any] | None = None, group: Any = None
) -> dict[str, Any]:
    """``optim``'s state dict keyed by parameter name (``{}`` off rank 0 when the model's
    ``FullOptimStateDictConfig`` says ``rank0_only``)."""
    config = next(
        (m._optim_state_dict_config for m in model.modules() if hasattr(m, "_state_dict_type")),
        None,
    )
    if getattr(config, "rank0_only", False) and _rank(model, group) != 0:
        return {}
    osd = optim.state_dict() if optim_state_dict is None else optim_state_dict
    return _to_names(osd, _ordered_names(model, optim))


def optim_state_dict_to_load(
    model: Module,
    optim: Any,
    optim_state_dict: dict[str, Any],
    is_named_optimizer: bool = False,
    load_directly: bool = False,
    group: Any = None,
) -> dict[str, Any]:
    """A state dict from ``optim_state_dict`` turned back into ``optim.load_state_dict``'s form
    (loaded too, with ``load_directly``)."""
    osd = _to_indices(optim_state_dict, _ordered_names(model, optim))
    if load_directly:
        optim.load_state_dict(osd)
    return osd


def full_optim_state_dict(
    model: Module,
    optim: Any,
    optim_input: Any = None,
    rank0_only: bool = True,
    group: Any = None,
) -> dict[str, Any]:
    """Deprecated form of ``optim_state_dict`` (``{}`` off rank 0 unless ``rank0_only=False``)."""
    _legacy("full_optim_state_dict", "optim_state_dict")
    if rank0_only and _rank(model, group) != 0:
        return {}
    return _to_names(optim.state_dict(), _ordered_names(model, optim))


def scatter_full_optim_state_dict(
    full_optim_state_dict: dict[str, Any] | None,
    model: Module,
    optim_input: Any = None,
    optim: Any = None,
    group: Any = None,
) -> dict[str, Any]:
    """Deprecated form of ``optim_state_dict_to_load`` (the names in ``optim``'s order, else in
    ``model.parameters()``' order)."""
    _legacy("scatter_full_optim_state_dict", "optim_state_dict_to_load")
    if optim is not None:
        names = _ordered_names(model, optim)
    else:
        names = [(0, clean_name(n)) for n, _ in model.named_parameters()]
    return _to_indices(full_optim_state_dict or {"state": {}, "param_groups": []}, names)


__all__ = [
    "full_optim_state_dict",
    "optim_state_dict",
    "optim_state_dict_to_load",
    "scatter_full_optim_state_dict",
]
