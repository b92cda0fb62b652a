"""``parallelize_module``: apply a plan of parallel styles to a module's submodules."""

from __future__ import annotations

from ....nn.module import Module
from ...device_mesh import DeviceMesh, init_device_mesh
from .style import ParallelStyle


def parallelize_module(
    module: Module,
    device_mesh: DeviceMesh | None = None,
    parallelize_plan: ParallelStyle | dict[str, ParallelStyle] | None = None,
    *,
    src_data_rank: int | None = 0,
) -> Module:
    """Shard ``module`` in place as ``parallelize_plan`` says (one style for the module itself,
    or ``{submodule name: style}``); parameters start from rank ``src_data_rank``'s values."""
    mesh = device_mesh if device_mesh is not None else _whole_world_mesh(module)
    if parallelize_plan is None:
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan._check(module, "")
        return parallelize_plan._apply(module, mesh, src_data_rank)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(
            f"parallelize_module: parallelize_plan must be a ParallelStyle or a dict of "
            f"submodule name to ParallelStyle, got {type(parallelize_plan).__name__}"
        )
    named = dict(module.named_modules())
    targets = []
    for fqn, style in parallelize_plan.items():
        if not isinstance(style, ParallelStyle):
            raise TypeError(
                f"parallelize_module: the plan's entry {fqn!r} must be a ParallelStyle, got "
                f"{type(style).__name__}"
            )
        if fqn not in named or fqn == "":
            subs = [n for n in named if n]
            raise ValueError(
                f"parallelize_module: the plan names submodule {fqn!r}, which "
                f"{type(module).__name__} does not have; its submodules are {subs}"
            )
        style._check(named[fqn], fqn)
        targets.append((named[fqn], style))
    for sub, style in targets:
        style._apply(sub, mesh, src_data_rank)
    return module


def _whole_world_mesh(module: Module) -> DeviceMesh:
    from ...process_group import _require

    p = next(iter(module.parameters()), None)
    return init_device_mesh("cpu" if p is None else p.device.type, (_require().size,))
