"""``ColwiseParallel`` and ``RowwiseParallel``: Megatron-style sharding of an ``nn.Linear``.

Colwise keeps rows [out_features chunk] of weight and bias: a replicated input gives the output
sharded on its last dim; the input's gradient is summed over ranks in backward. Rowwise keeps
columns [in_features chunk] of weight: the input sharded on its last dim gives a partial output,
summed over ranks (backward: the identity), then the replicated bias is added once.
"""

from __future__ import annotations

import functools
from typing import Any

from ....nn.functional import linear
from ....nn.linear import Linear
from ....nn.module import Module
from ...device_mesh import DeviceMesh
from .._functions import _AllReduceSum, _IdentityAllReduceBackward
from ..dtensor import DTensorParameter, local_chunk
from ..placement_types import Placement, Replicate, Shard


class ParallelStyle:
    """How ``parallelize_module`` lays out one submodule."""

    _name = "ParallelStyle"
    _defaults: tuple[Placement, Placement] = (Replicate(), Replicate())

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
        given = (self.input_layouts[0], self.output_layouts[0])
        if given != self._defaults or not use_local_output:
            raise NotImplementedError(
                f"{self._name}: only the default layouts are supported here (input_layouts="
                f"{self._defaults[0]!r}, output_layouts={self._defaults[1]!r}, "
                f"use_local_output=True), got {given} and use_local_output={use_local_output}"
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

    def _apply(self, module: Module, device_mesh: DeviceMesh, src_data_rank: int | None) -> Module:
        _shard_param(module, "weight", device_mesh, Shard(0), src_data_rank)
        _shard_param(module, "bias", device_mesh, Shard(0), src_data_rank)
        group = device_mesh.get_group()

        def replicate_input(mod: Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
            return (_IdentityAllReduceBackward.apply(args[0], group),) + tuple(args[1:])

        module.register_forward_pre_hook(replicate_input)
        return module


def _rowwise_forward(module: Linear, group: Any, input: Any) -> Any:
    local_in = module.weight.shape[-1]
    if input.shape[-1] != local_in:
        raise ValueError(
            f"RowwiseParallel: the input's last dim must be this rank's shard of in_features "
            f"({module.in_features} split over {group.size} ranks: {local_in}), got input of "
            f"shape {tuple(input.shape)}"
        )
    out = _AllReduceSum.apply(linear(input, module.weight), group)
    return out if module.bias is None else out + module.bias


class RowwiseParallel(ParallelStyle):
    """Shard an ``nn.Linear`` by input features: input sharded on dim -1, output replicated."""

    _name = "RowwiseParallel"
    _defaults = (Shard(-1), Replicate())

    def _apply(self, module: Module, device_mesh: DeviceMesh, src_data_rank: int | None) -> Module:
        _shard_param(module, "weight", device_mesh, Shard(1), src_data_rank)
        _shard_param(module, "bias", device_mesh, Replicate(), src_data_rank)
        module.forward = functools.partial(_rowwise_forward, module, device_mesh.get_group())
        return module


__all__ = ["ColwiseParallel", "ParallelStyle", "RowwiseParallel"]
