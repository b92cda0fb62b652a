"""``ColwiseParallel`` and ``RowwiseParallel``: Megatron-style sharding of an ``nn.Linear``.

Colwise keeps rows [out_features chunk] of weight and bias: a replicated input gives the output
sharded on its last dim; the input's gradient is summed over ranks in backward. Rowwise keeps
columns [in_features chunk] of weight: the input sharded on its last dim gives a partial output,
summed over ranks (backward: the identity), then the replicated bias is added once.
Sequence parallel: Colwise's ``input_layouts=Shard(d)`` all-gathers the input along d first
(backward: reduce-scatter); Rowwise's ``output_layouts=Shard(d)`` reduce-scatters instead of
all-reducing (backward: all-gather).
"""

from __future__ import annotations

import functools
from typing import Any

from ....nn.functional import linear
from ....nn.linear import Linear
from ....nn.module import Module
from ...device_mesh import DeviceMesh
from .._functions import (
    _AllGatherReduceScatterBackward,
    _AllReduceSum,
    _IdentityAllReduceBackward,
    _ReduceScatterAllGatherBackward,
)
from ..dtensor import DTensorParameter, local_chunk
from ..placement_types import Placement, Replicate, Shard


class ParallelStyle:
    """How ``parallelize_module`` lays out one submodule."""

    _name = "ParallelStyle"
    _defaults: tuple[Placement, Placement] = (Replicate(), Replicate())
    _fixed = 0  # which of (input, output) layouts must stay the default

    def __init__(
        self,
        *,
        input_layouts: Placement | None = None,
        output_layouts: Placement | None = None,
        use_local_output: bool = True,
    ) -> None:
        self.input_layouts = (input_layouts or self._defaults[0],)
        self.output_layouts = (output_layouts or self._defaults[1],)
        self.use_local_output = use_local_output
        fixed = self._fixed
        given = (self.input_layouts[0], self.output_layouts[0])
        free = given[1 - fixed]
        if (
            given[fixed] != self._defaults[fixed]
            or not use_local_output
            or not isinstance(free, (Replicate, Shard))
        ):
            which = ("input_layouts", "output_layouts")
            raise NotImplementedError(
                f"{self._name}: supported here are {which[fixed]}={self._defaults[fixed]!r}, "
                f"{which[1 - fixed]} Replicate() or Shard(dim), use_local_output=True; got "
                f"input_layouts={given[0]!r}, output_layouts={given[1]!r}, "
                f"use_local_output={use_local_output}"
            )

    def _apply(self, module: Module, device_mesh: DeviceMesh, src_data_rank: int | None) -> Module:
        raise NotImplementedError

    def _check(self, module: Module, fqn: str) -> None:
        where = f"submodule {fqn!r} " if fqn else ""
        if not isinstance(module, Linear):
            raise NotImplementedError(
                f"{self._name} currently only supports nn.Linear here; the plan gives it to "
                f"{where}of type {type(module).__name__}"
            )
        if isinstance(module.weight, DTensorParameter):
            raise ValueError(
                f"{self._name}: {where or 'the module '}is already parallelized (its weight is a "
                f"DTensor with placements {module.weight.placements})"
            )

    def __repr__(self) -> str:
        return (
            f"{self._name}(input_layouts={self.input_layouts!r}, output_layouts="
            f"{self.output_layouts!r}, use_local_output={self.use_local_output})"
        )


def _shard_param(
    module: Module, name: str, mesh: DeviceMesh, placement: Placement, src: int | None
) -> None:
    p = getattr(module, name)
    if p is None:
        return
    full = p.detach().clone().contiguous()
    if src is not None:
        mesh.get_group().broadcast(full._data, src).wait()
    local = local_chunk(full, mesh, placement)
    setattr(module, name, DTensorParameter(local, mesh, (placement,), p.shape, p.requires_grad))


class ColwiseParallel(ParallelStyle):
    """Shard an ``nn.Linear`` by output features: replicated input, output sharded on dim -1."""

    _name = "ColwiseParallel"
    _defaults = (Replicate(), Shard(-1))
    _fixed = 1

    def _apply(self, module: Module, device_mesh: DeviceMesh, src_data_rank: int | None) -> Module:
        _shard_param(module, "weight", device_mesh, Shard(0), src_data_rank)
        _shard_param(module, "bias", device_mesh, Shard(0), src_data_rank)
        group, layout = device_mesh.get_group(), self.input_layouts[0]

        def replicate_input(mod: Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
            x = args[0]
            if isinstance(layout, Shard):  # sequence parallel: gather (backward: reduce-scatter)
                x = _AllGatherReduceScatterBackward.apply(x, group, layout.dim % x.dim())
            else:
                x = _IdentityAllReduceBackward.apply(x, group)
            return (x,) + tuple(args[1:])

        module.register_forward_pre_hook(replicate_input)
        return module


def _rowwise_forward(module: Linear, group: Any, layout: Placement, input: Any) -> Any:
    local_in = module.weight.shape[-1]
    if input.shape[-1] != local_in:
        raise ValueError(
            f"RowwiseParallel: the input's last dim must be this rank's shard of in_features "
            f"({module.in_features} split over {group.size} ranks: {local_in}), got input of "
            f"shape {tuple(input.shape)}"
        )
    partial = linear(input, module.weight)
    if isinstance(layout, Shard):  # sequence parallel: each rank keeps its chunk of the sum
        out = _ReduceScatterAllGatherBackward.apply(partial, group, layout.dim % partial.dim())
    else:
        out = _AllReduceSum.apply(partial, group)
    if module.bias is None:
        return out
    bias = module.bias
    if isinstance(layout, Shard):  # each rank's rows give part of the replicated bias's gradient
        bias = _IdentityAllReduceBackward.apply(bias, group)
    return out + bias


class RowwiseParallel(ParallelStyle):
    """Shard an ``nn.Linear`` by input features: input sharded on dim -1, output replicated."""

    _name = "RowwiseParallel"
    _defaults = (Shard(-1), Replicate())

    def _apply(self, module: Module, device_mesh: DeviceMesh, src_data_rank: int | None) -> Module:
        _shard_param(module, "weight", device_mesh, Shard(1), src_data_rank)
        _shard_param(module, "bias", device_mesh, Replicate(), src_data_rank)
        module.forward = functools.partial(
            _rowwise_forward, module, device_mesh.get_group(), self.output_layouts[0]
        )
        return module


__all__ = ["ColwiseParallel", "ParallelStyle", "RowwiseParallel"]
