"""``torch.distributed.device_mesh``: a 1-D mesh over the default process group's ranks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .backend_base import Backend


class DeviceMesh:
    """The ranks a tensor is laid out over; here one dimension spanning the whole default group."""

    def __init__(
        self,
        device_type: str,
        mesh: Any,
        *,
        mesh_dim_names: tuple[str, ...] | None = None,
        _init_backend: bool = True,
    ) -> None:
        from .process_group import _require

        ranks = [int(r) for r in (mesh.tolist() if hasattr(mesh, "tolist") else mesh)]
        self._pg: Backend = _require()
        if ranks != list(range(self._pg.size)):
            raise NotImplementedError(
                f"DeviceMesh: the mesh must be every rank of the default group in order "
                f"(list(range({self._pg.size}))), got {ranks}; sub-meshes are not supported"
            )
        if mesh_dim_names is not None and len(tuple(mesh_dim_names)) != 1:
            raise ValueError(
                f"DeviceMesh: mesh_dim_names {tuple(mesh_dim_names)} must name the mesh's one "
                "dimension"
            )
        self.device_type = device_type
        self._ranks = ranks
        self.mesh_dim_names = None if mesh_dim_names is None else tuple(mesh_dim_names)

    @property
    def mesh(self) -> Any:
        """The ranks, as an int64 Tensor."""
        from ..tensor.factory import tensor

        return tensor(self._ranks)

    @property
    def ndim(self) -> int:
        return 1

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self._ranks),)

    def size(self, mesh_dim: int | None = None) -> int:
        """The number of ranks (along ``mesh_dim``: there is one dimension)."""
        self._dim(mesh_dim)
        return len(self._ranks)

    def get_rank(self) -> int:
        """This process's global rank."""
        return self._pg.rank

    def get_local_rank(self, mesh_dim: int | str | None = None) -> int:
        """This process's coordinate along ``mesh_dim``."""
        self._dim(mesh_dim)
        return self._pg.rank

    def get_group(self, mesh_dim: int | str | None = None) -> Backend:
        """The process group of ``mesh_dim``; collectives take it as ``group=``."""
        self._dim(mesh_dim)
        return self._pg

    def __getitem__(self, name: str) -> DeviceMesh:
        if self.mesh_dim_names is None or name not in self.mesh_dim_names:
            raise KeyError(
                f"Invalid mesh_dim_name {name!r} specified; the mesh's dimension names are "
                f"{self.mesh_dim_names}"
            )
        return self

    def _dim(self, mesh_dim: int | str | None) -> None:
        if mesh_dim is None or mesh_dim in (0, -1):
            return
        if self.mesh_dim_names is not None and mesh_dim in self.mesh_dim_names:
            return
        raise IndexError(f"DeviceMesh: mesh_dim {mesh_dim!r} is out of range for a 1-D mesh")

    def __repr__(self) -> str:
        n = len(self._ranks)
        shape = f"({n},)" if self.mesh_dim_names is None else f"({self.mesh_dim_names[0]}={n})"
        stride = "(1,)" if n > 1 else "((),)"
        return f"DeviceMesh({shape}, {self.device_type!r}, stride={stride})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeviceMesh)
            and other._pg is self._pg
            and other._ranks == self._ranks
            and other.device_type == self.device_type
        )

    def __hash__(self) -> int:
        return hash((id(self._pg), tuple(self._ranks), self.device_type))


def init_device_mesh(
    device_type: str,
    mesh_shape: Sequence[int],
    *,
    mesh_dim_names: tuple[str, ...] | None = None,
    backend_override: Any = None,
) -> DeviceMesh:
    """A mesh of ``mesh_shape`` over every rank, starting the default process group if needed."""
    from .process_group import get_default_backend_for_device, init_process_group, is_initialized

    shape = tuple(int(s) for s in mesh_shape)
    if len(shape) != 1:
        raise NotImplementedError(
            f"init_device_mesh: only 1-D meshes are supported here, got mesh_shape {shape}"
        )
    if not is_initialized():
        init_process_group(get_default_backend_for_device(device_type))
    from .process_group import _require

    world = _require().size
    if math.prod(shape) != world:
        raise RuntimeError(
            f"init_device_mesh: mesh_shape {shape} has {math.prod(shape)} ranks but the default "
            f"world size is {world}; the mesh must span every rank"
        )
    return DeviceMesh(device_type, list(range(world)), mesh_dim_names=mesh_dim_names)


__all__ = ["DeviceMesh", "init_device_mesh"]
