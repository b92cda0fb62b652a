"""``DTensor``: a tensor laid out on a DeviceMesh; it computes on its local shard.

Unlike PyTorch's, whose ``shape`` is the global one and whose ops redistribute, this DTensor
*is* its local shard (``shape``, arithmetic and optimizers see the local data);
``full_tensor()`` all-gathers the global tensor and ``to_local()`` gives the shard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...nn.parameter import Parameter
from ...tensor.tensor import Tensor
from ..device_mesh import DeviceMesh
from ._functions import _AllGather
from .placement_types import Placement, Replicate, Shard, chunk_bounds


class DTensor(Tensor):
    """A local shard with its ``device_mesh``, ``placements`` and global shape."""

    def __init__(
        self,
        local: Tensor,
        device_mesh: DeviceMesh,
        placements: Sequence[Placement],
        global_shape: Sequence[int],
    ) -> None:
        Tensor.__init__(self)
        self._data = local._data
        self._vc = local._shared_version_counter()
        self._requires_grad = local._requires_grad
        self._set_layout(device_mesh, placements, global_shape)

    def _set_layout(
        self, device_mesh: DeviceMesh, placements: Sequence[Placement], global_shape: Sequence[int]
    ) -> None:
        self._device_mesh = device_mesh
        self._placements = tuple(placements)
        self._global_shape = tuple(int(s) for s in global_shape)

    @property
    def device_mesh(self) -> DeviceMesh:
        return self._device_mesh

    @property
    def placements(self) -> tuple[Placement, ...]:
        return self._placements

    def to_local(self, *, grad_placements: Any = None) -> Tensor:
        """This rank's shard, a plain Tensor sharing its data (and graph)."""
        return self.view_as(self)

    def full_tensor(self, *, grad_placements: Any = None) -> Tensor:
        """The global tensor on every rank (an all-gather of the shards; differentiable)."""
        (p,) = self._placements
        local = self.view_as(self)
        if isinstance(p, Replicate):
            return local.clone()
        dim = p.dim % len(self._global_shape)
        return _AllGather.apply(local, self._device_mesh.get_group(), dim, self._global_shape[dim])

    @staticmethod
    def from_local(
        local_tensor: Tensor,
        device_mesh: DeviceMesh | None = None,
        placements: Sequence[Placement] | None = None,
        *,
        run_check: bool = False,
        shape: Sequence[int] | None = None,
        stride: Any = None,
    ) -> DTensor:
        """Wrap each rank's ``local_tensor`` as the shard ``placements`` say it is (sharing data);
        without ``shape``, shards are assumed even."""
        mesh = device_mesh if device_mesh is not None else _default_mesh(local_tensor)
        places = tuple(placements) if placements is not None else (Replicate(),)
        if shape is None:
            shape = list(local_tensor.shape)
            for p in places:
                if isinstance(p, Shard):
                    shape[p.dim % len(shape)] *= mesh.size()
        return DTensor(local_tensor, mesh, places, shape)

    def __repr__(self) -> str:
        local = Tensor.__repr__(self.to_local().detach())
        return (
            f"DTensor(local_tensor={local}, device_mesh={self._device_mesh!r}, "
            f"placements={self._placements!r})"
        )


class DTensorParameter(DTensor, Parameter):
    """A module parameter that is a DTensor (``isinstance`` of both, as PyTorch's)."""

    def __init__(
        self,
        local: Tensor,
        device_mesh: DeviceMesh,
        placements: Sequence[Placement],
        global_shape: Sequence[int],
        requires_grad: bool = True,
    ) -> None:
        Parameter.__init__(self, local.detach(), requires_grad)
        self._set_layout(device_mesh, placements, global_shape)

    __repr__ = DTensor.__repr__

    @property
    def grad(self) -> DTensor | None:
        """The gradient as a DTensor of the same layout (sharing the local gradient's data)."""
        g = self._grad
        if g is None:
            return None
        cached = self.__dict__.get("_grad_view")
        if cached is None or cached._data is not g._data:
            cached = DTensor(g, self._device_mesh, self._placements, self._global_shape)
            self.__dict__["_grad_view"] = cached
        return cached

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        Tensor.grad.fset(self, value)

    def __deepcopy__(self, memo: dict[int, Any]) -> DTensorParameter:
        if id(self) not in memo:
            local = Tensor.__new__(Tensor)
            Tensor.__init__(local)
            local._data = self._data.copy()
            memo[id(self)] = type(self)(
                local, self._device_mesh, self._placements, self._global_shape, self._requires_grad
            )
        return memo[id(self)]


def _default_mesh(t: Tensor) -> DeviceMesh:
    from ..device_mesh import init_device_mesh
    from ..process_group import _require

    return init_device_mesh(t.device.type, (_require().size,))


def _check_placements(placements: Sequence[Placement], ndim: int, where: str) -> Placement:
    places = tuple(placements)
    if len(places) != 1 or not isinstance(places[0], (Shard, Replicate)):
        raise ValueError(
            f"{where}: placements must be one Shard(dim) or Replicate() for the 1-D mesh, got "
            f"{places}"
        )
    p = places[0]
    if isinstance(p, Shard) and not -ndim <= p.dim < max(ndim, 1):
        raise IndexError(f"{where}: Shard(dim={p.dim}) is out of range for a {ndim}-D tensor")
    return p


def local_chunk(full: Tensor, mesh: DeviceMesh, placement: Placement) -> Tensor:
    """This rank's part of ``full`` under ``placement`` (a contiguous copy)."""
    if isinstance(placement, Shard):
        dim = placement.dim % full.dim()
        start, stop = chunk_bounds(full.shape[dim], mesh.size(), mesh.get_rank())
        full = full.narrow(dim, start, stop - start)
    return full.detach().clone().contiguous()


def distribute_tensor(
    tensor: Tensor,
    device_mesh: DeviceMesh | None = None,
    placements: Sequence[Placement] | None = None,
    *,
    src_data_rank: int | None = 0,
) -> DTensor:
    """Lay ``tensor`` out on the mesh: rank ``src_data_rank``'s values (None: each rank's own),
    each rank keeping its part."""
    mesh = device_mesh if device_mesh is not None else _default_mesh(tensor)
    places = tuple(placements) if placements is not None else (Replicate(),)
    p = _check_placements(places, tensor.dim(), "distribute_tensor")
    full = tensor.detach().clone().contiguous()
    if src_data_rank is not None:
        mesh.get_group().broadcast(full._data, src_data_rank).wait()
    local = local_chunk(full, mesh, p)
    local.requires_grad_(tensor.requires_grad)
    return DTensor(local, mesh, places, tensor.shape)


__all__ = ["DTensor", "DTensorParameter", "distribute_tensor", "local_chunk"]
