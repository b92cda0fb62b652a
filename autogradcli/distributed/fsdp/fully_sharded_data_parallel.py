"""``FullyShardedDataParallel`` with PyTorch's signature, as the honest closest thing here.

Every rank keeps the full parameters and gradients are averaged across ranks after backward:
``ShardingStrategy.NO_SHARD``, which is DDP's math. The other strategies are accepted and train
identically, without the memory saving (a one-time warning says so). ``auto_wrap_policy`` wraps
the submodules it selects in nested FSDP units (``_fsdp_wrapped_module``), as PyTorch does; only
the outermost unit communicates. ``state_dict()`` gives the unwrapped module's keys (PyTorch's
full state dict), whatever ``StateDictType`` is set, since every rank holds the full values.
"""

from __future__ import annotations

import contextlib
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...nn.module import Module
from ...nn.utils.clip_grad import clip_grad_norm_
from ..process_group import _require
from . import optim_state
from ._names import FSDP_WRAPPED_MODULE, clean_name
from ._sync import GradSync, ignored_ids, note_once
from .api import (
    DEFAULT_CONFIGS,
    BackwardPrefetch,
    CPUOffload,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    MixedPrecision,
    ShardingStrategy,
    StateDictSettings,
    StateDictType,
)
from .wrap import recursive_wrap

_DEPRECATED = (  # PyTorch's words
    "FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated. Please use "
    "APIs, get_state_dict() and set_state_dict(), which can support different parallelisms, "
    "FSDP1, FSDP2, DDP. API doc: https://pytorch.org/docs/stable/distributed.checkpoint.html"
    "#torch.distributed.checkpoint.state_dict.get_state_dict .Tutorial: "
    "https://pytorch.org/tutorials/recipes/distributed_checkpoint_recipe.html ."
)


class FullyShardedDataParallel(Module):
    """Data parallelism with FSDP's API: full parameters on every rank, gradients averaged."""

    def __init__(
        self,
        module: Module,
        process_group: Any = None,
        sharding_strategy: ShardingStrategy | None = None,
        cpu_offload: CPUOffload | None = None,
        auto_wrap_policy: Callable[..., bool] | None = None,
        backward_prefetch: BackwardPrefetch | None = BackwardPrefetch.BACKWARD_PRE,
        mixed_precision: MixedPrecision | None = None,
        ignored_modules: Any = None,
        param_init_fn: Callable[[Module], None] | None = None,
        device_id: Any = None,
        sync_module_states: bool = False,
        forward_prefetch: bool = False,
        limit_all_gathers: bool = True,
        use_orig_params: bool = False,
        ignored_states: Any = None,
        device_mesh: Any = None,
        _inner: bool = False,
    ) -> None:
        super().__init__()
        pg = _require(process_group if not isinstance(process_group, tuple) else None)
        self.sharding_strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        self.cpu_offload = cpu_offload or CPUOffload()
        self.backward_prefetch = backward_prefetch
        self.mixed_precision = mixed_precision
        self.forward_prefetch = forward_prefetch
        self.limit_all_gathers = limit_all_gathers
        self._use_orig_params = use_orig_params
        self._sync_module_states = sync_module_states
        if device_id is not None:
            module.to(f"cuda:{device_id}" if isinstance(device_id, int) else device_id)
        ignored = ignored_ids(ignored_modules, ignored_states)
        if auto_wrap_policy is not None:
            inner = dict(
                process_group=process_group,
                sharding_strategy=sharding_strategy,
                cpu_offload=cpu_offload,
                backward_prefetch=backward_prefetch,
                mixed_precision=mixed_precision,
                forward_prefetch=forward_prefetch,
                limit_all_gathers=limit_all_gathers,
                use_orig_params=use_orig_params,
                _inner=True,
            )
            recursive_wrap(
                module,
                auto_wrap_policy,
                lambda m: FullyShardedDataParallel(m, **inner),
                ignored,
                only_wrap_children=True,
            )
        setattr(self, FSDP_WRAPPED_MODULE, module)
        set_state_dict_settings(self, StateDictType.FULL_STATE_DICT, None, None)
        self._summoned = False
        self._is_root = True
        self._sync: GradSync | None = None
        if _inner:
            return
        for m in module.modules():
            if isinstance(m, FullyShardedDataParallel):
                m._is_root, m._sync = False, None
        _note_options(self.sharding_strategy, self.cpu_offload, mixed_precision)
        self._sync = GradSync(module, pg, ignored)
        self._sync.zero_unused_in_units([_owned_params(u) for u in self.fsdp_modules(self)])

    @property
    def module(self) -> Module:
        """The wrapped module."""
        return self._modules[FSDP_WRAPPED_MODULE]

    @property
    def process_group(self) -> Any:
        return self._sync.pg if self._sync is not None else _require()

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            inner = self.__dict__.get("_modules", {}).get(FSDP_WRAPPED_MODULE)
            if inner is None:
                raise
            return getattr(inner, name)

    def __getitem__(self, key: Any) -> Any:
        return self.module.__getitem__(key)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self._sync is None:
            return self.module(*args, **kwargs)
        return self._sync.run(self.module, *args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward inside the block accumulates gradients locally, without communicating."""
        if not self._is_root or self._sync is None:
            raise RuntimeError("`no_sync()` on inner FSDP instances is not supported.")
        prev = self._sync.require_sync
        self._sync.require_sync = False
        try:
            yield
        finally:
            self._sync.require_sync = prev

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Any:
        """Clip the gradients of every parameter to a total norm of at most ``max_norm``."""
        if not self._is_root:
            raise RuntimeError(
                "`clip_grad_norm_()` should only be called on the root FSDP instance"
            )
        return clip_grad_norm_(self.parameters(), max_norm, norm_type)

    # ------------------------------------------------------------------ names
    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        """As ``Module``'s; inside ``summon_full_params`` the names are the unwrapped module's."""
        for name, p in super().named_parameters(prefix, recurse, remove_duplicate):
            yield (clean_name(name) if self._summoned else name), p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        """As ``Module``'s; inside ``summon_full_params`` the names are the unwrapped module's."""
        for name, b in super().named_buffers(prefix, recurse, remove_duplicate):
            yield (clean_name(name) if self._summoned else name), b

    # ------------------------------------------------------------------ state dict
    def state_dict(
        self, *, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Any]:
        """The unwrapped module's keys and full values (``{}`` off rank 0 with ``rank0_only``)."""
        if destination is not None:  # inside a parent's state_dict: plain recursion
            return super().state_dict(destination=destination, prefix=prefix, keep_vars=keep_vars)
        config = self._state_dict_config
        if getattr(config, "rank0_only", False) and self.process_group.rank != 0:
            return {}
        raw = super().state_dict(prefix=prefix, keep_vars=keep_vars)
        out: OrderedDict[str, Any] = OrderedDict()
        out._metadata = OrderedDict(  # type: ignore[attr-defined]
            (clean_name(k + ".")[:-1] if k else k, v) for k, v in raw._metadata.items()
        )
        for key, value in raw.items():
            if not keep_vars:
                value = value.clone()
                if config.offload_to_cpu:
                    value = value.cpu()
            out[clean_name(key)] = value
        return out

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> Any:
        """Load a state dict keyed as the unwrapped module (or as this wrapper) is."""
        wrapped = {clean_name(k): k for k in super().state_dict(keep_vars=True)}
        renamed = OrderedDict((wrapped.get(k, k), v) for k, v in state_dict.items())
        try:
            return super().load_state_dict(renamed, strict=strict, assign=assign)
        except RuntimeError as e:  # name the keys as the caller's state dict has them
            raise RuntimeError(clean_name(str(e))) from None

    optim_state_dict = staticmethod(optim_state.optim_state_dict)
    optim_state_dict_to_load = staticmethod(optim_state.optim_state_dict_to_load)
    full_optim_state_dict = staticmethod(optim_state.full_optim_state_dict)
    scatter_full_optim_state_dict = staticmethod(optim_state.scatter_full_optim_state_dict)

    # ------------------------------------------------------------------ static helpers
    @staticmethod
    def fsdp_modules(module: Module, root_only: bool = False) -> list[FullyShardedDataParallel]:
        """Every FSDP unit in ``module`` (only the roots with ``root_only``)."""
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        return [m for m in units if m._is_root] if root_only else units

    @staticmethod
    def set_state_dict_type(
        module: Module,
        state_dict_type: StateDictType,
        state_dict_config: Any = None,
        optim_state_dict_config: Any = None,
    ) -> StateDictSettings:
        """Set the state-dict form of every FSDP unit in ``module``; returns the previous one
        (deprecated in PyTorch, with its FutureWarning)."""
        warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
        return _set_state_dict_type(  # type: ignore[return-value]
            module, state_dict_type, state_dict_config, optim_state_dict_config
        )

    @staticmethod
    def get_state_dict_type(module: Module) -> StateDictSettings:
        """The state-dict form the FSDP units of ``module`` share."""
        units = FullyShardedDataParallel.fsdp_modules(module)
        if not units:
            raise ValueError("No FSDP modules were found in the module")
        u = units[0]
        return StateDictSettings(
            u._state_dict_type, u._state_dict_config, u._optim_state_dict_config
        )

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(
        module: Module,
        state_dict_type: StateDictType,
        state_dict_config: Any = None,
        optim_state_dict_config: Any = None,
    ) -> Iterator[None]:
        """Within the block, ``state_dict()`` of ``module``'s FSDP units takes this form
        (deprecated in PyTorch, with its FutureWarning)."""
        warnings.warn(_DEPRECATED, FutureWarning, stacklevel=3)
        prev = _set_state_dict_type(
            module, state_dict_type, state_dict_config, optim_state_dict_config
        )
        try:
            yield
        finally:
            if prev is not None:
                _set_state_dict_type(module, *prev)

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(
        module: Module,
        recurse: bool = True,
        writeback: bool = True,
        rank0_only: bool = False,
        offload_to_cpu: bool = False,
        with_grads: bool = False,
    ) -> Iterator[None]:
        """Within the block the full parameters are visible under the unwrapped module's names
        (they always are here: nothing is gathered)."""
        units = FullyShardedDataParallel.fsdp_modules(module)
        prev = [u._summoned for u in units]
        for u in units:
            u._summoned = True
        try:
            yield
        finally:
            for u, p in zip(units, prev, strict=True):
                u._summoned = p


def _owned_params(unit: FullyShardedDataParallel) -> list[Any]:
    """The parameters of ``unit``'s flat parameter in PyTorch: those not in a nested unit."""
    out, stack = [], [unit.module]
    while stack:
        m = stack.pop()
        out.extend(p for p in m._parameters.values() if p is not None)
        stack.extend(
            c
            for c in m._modules.values()
            if c is not None and not isinstance(c, FullyShardedDataParallel)
        )
    return out


def unit_order(model: Module) -> dict[int, int]:
    """Parameter id -> the position of its FSDP unit among ``model``'s units (pre-order)."""
    units = FullyShardedDataParallel.fsdp_modules(model)
    return {id(p): k for k, u in enumerate(units) for p in _owned_params(u)}


def _set_state_dict_type(
    module: Module, state_dict_type: StateDictType, config: Any, optim_config: Any
) -> StateDictSettings | None:
    units = FullyShardedDataParallel.fsdp_modules(module)
    prev = FullyShardedDataParallel.get_state_dict_type(module) if units else None
    for unit in units:
        set_state_dict_settings(unit, state_dict_type, config, optim_config)
    return prev


def set_state_dict_settings(
    unit: FullyShardedDataParallel,
    state_dict_type: StateDictType,
    state_dict_config: Any,
    optim_state_dict_config: Any,
) -> None:
    """Check the configs against ``state_dict_type`` (PyTorch's errors) and store them."""
    config_type, optim_type = DEFAULT_CONFIGS[state_dict_type]
    config = config_type() if state_dict_config is None else state_dict_config
    optim = optim_type() if optim_state_dict_config is None else optim_state_dict_config
    if type(config) is not config_type:
        raise RuntimeError(
            f"Expected state_dict_config of type {config_type} but got {type(config)}"
        )
    if type(optim) is not optim_type:
        raise RuntimeError(
            f"Expected optim_state_dict_config of type {optim_type} but got {type(optim)}"
        )
    unit._state_dict_type = state_dict_type
    unit._state_dict_config = config
    unit._optim_state_dict_config = optim


def _note_options(
    strategy: ShardingStrategy, offload: CPUOffload, mixed: MixedPrecision | None
) -> None:
    if strategy is not ShardingStrategy.NO_SHARD:
        note_once(
            "shard",
            f"FullyShardedDataParallel: {strategy} keeps the full parameters, gradients and "
            "optimizer state on every rank here (autogradcli does not shard); training is "
            "identical to NO_SHARD, without the memory saving",
            stacklevel=3,
        )
    if offload.offload_params:
        note_once(
            "offload",
            "FullyShardedDataParallel: CPUOffload is accepted; parameters stay where they are",
            stacklevel=3,
        )
    if mixed is not None and any(
        d is not None for d in (mixed.param_dtype, mixed.reduce_dtype, mixed.buffer_dtype)
    ):
        note_once(
            "mixed",
            "FullyShardedDataParallel: MixedPrecision is accepted; forward, backward and the "
            "gradient average run in the parameters' own dtype",
            stacklevel=3,
        )


FSDP = FullyShardedDataParallel

__all__ = [
    "FSDP",
    "FullOptimStateDictConfig",
    "FullStateDictConfig",
    "FullyShardedDataParallel",
    "StateDictType",
]
