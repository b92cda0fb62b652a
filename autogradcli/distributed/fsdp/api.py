"""``torch.distributed.fsdp.api``: the option enums and config dataclasses FSDP takes.

They carry PyTorch's names, members, defaults and reprs; what each does on this engine (where
every rank keeps the full parameters) is said in ``fully_sharded_data_parallel.py``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...nn.normalization import _BatchNorm


class ShardingStrategy(enum.Enum):
    """How parameters, gradients and optimizer state would be split across ranks."""

    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


class BackwardPrefetch(enum.Enum):
    """When the next all-gather is issued during backward (a scheduling hint)."""

    BACKWARD_PRE = enum.auto()
    BACKWARD_POST = enum.auto()


class StateDictType(enum.Enum):
    """Which form ``state_dict()`` of an FSDP module takes."""

    FULL_STATE_DICT = enum.auto()
    LOCAL_STATE_DICT = enum.auto()
    SHARDED_STATE_DICT = enum.auto()


class OptimStateKeyType(enum.Enum):
    """How an optimizer state dict names its parameters: by index or by dotted name."""

    PARAM_NAME = enum.auto()
    PARAM_ID = enum.auto()


@dataclass
class CPUOffload:
    """Keep parameters (and gradients) on the CPU between uses."""

    offload_params: bool = False


@dataclass
class MixedPrecision:
    """Dtypes for forward/backward compute, gradient reduction and buffers."""

    param_dtype: Any = None
    reduce_dtype: Any = None
    buffer_dtype: Any = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: Sequence[type] = (_BatchNorm,)


@dataclass
class StateDictConfig:
    """Base of the state-dict configs: ``offload_to_cpu`` moves the values to the CPU."""

    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    """Full (unsharded) state dict; ``rank0_only``: only rank 0 gets it, the others ``{}``."""

    rank0_only: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    """Each rank's local state dict."""


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    """Sharded state dict (each value a shard in PyTorch; the full value here)."""

    _use_dtensor: bool = False


@dataclass
class OptimStateDictConfig:
    """Base of the optimizer state-dict configs."""

    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    """Full optimizer state dict; ``rank0_only`` as in ``FullStateDictConfig``."""

    rank0_only: bool = False


@dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    """Each rank's local optimizer state dict."""

    offload_to_cpu: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    """Sharded optimizer state dict."""

    _use_dtensor: bool = False


class StateDictSettings(NamedTuple):
    """What ``FSDP.set_state_dict_type`` / ``get_state_dict_type`` return."""

    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """FSDP2's (``fully_shard``) mixed-precision policy."""

    param_dtype: Any = None
    reduce_dtype: Any = None
    output_dtype: Any = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """FSDP2's offload policy: the default offloads nothing."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """FSDP2: keep parameters on the CPU (``pin_memory`` for faster copies)."""

    pin_memory: bool = True


DEFAULT_CONFIGS = {
    StateDictType.FULL_STATE_DICT: (FullStateDictConfig, FullOptimStateDictConfig),
    StateDictType.LOCAL_STATE_DICT: (LocalStateDictConfig, LocalOptimStateDictConfig),
    StateDictType.SHARDED_STATE_DICT: (ShardedStateDictConfig, ShardedOptimStateDictConfig),
}

__all__ = [
    "BackwardPrefetch",
    "CPUOffload",
    "CPUOffloadPolicy",
    "FullOptimStateDictConfig",
    "FullStateDictConfig",
    "LocalOptimStateDictConfig",
    "LocalStateDictConfig",
    "MixedPrecision",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "OptimStateDictConfig",
    "OptimStateKeyType",
    "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig",
    "ShardingStrategy",
    "StateDictConfig",
    "StateDictSettings",
    "StateDictType",
]
