"""``torch.distributed.fsdp``: FSDP's API over data parallelism that keeps the full parameters
on every rank (``ShardingStrategy.NO_SHARD``'s math; the other strategies train identically
without the memory saving). See ``fully_sharded_data_parallel.py``."""

from . import api, wrap
from .api import (
    BackwardPrefetch,
    CPUOffload,
    CPUOffloadPolicy,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    LocalOptimStateDictConfig,
    LocalStateDictConfig,
    MixedPrecision,
    MixedPrecisionPolicy,
    OffloadPolicy,
    OptimStateDictConfig,
    OptimStateKeyType,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictSettings,
    StateDictType,
)
from .fully_shard import FSDPModule, fully_shard
from .fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = [*api.__all__, "FSDPModule", "FullyShardedDataParallel", "fully_shard", "wrap"]
