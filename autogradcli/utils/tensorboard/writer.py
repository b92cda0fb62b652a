"""The ``SummaryWriter`` class: tensorboardX's, with autogradcli tensors given to its ``add_*``
methods as numpy arrays (tensorboardX knows only numpy and torch)."""

from __future__ import annotations

import functools
from typing import Any

from ..._utils.tensorboardx import import_tensorboardx

_CLASS: list[type] = []


def _numpy(value: Any) -> Any:
    from ...tensor.tensor import Tensor

    if isinstance(value, Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, dict):
        return {k: _numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_numpy(v) for v in value)
    return value


def _converting(method: Any) -> Any:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        args = tuple(_numpy(a) for a in args)
        return method(self, *args, **{k: _numpy(v) for k, v in kwargs.items()})

    return wrapper


def _no_graph(self: Any, model: Any, *args: Any, **kwargs: Any) -> None:
    """PyTorch traces the model with TorchScript to draw it; there is no tracer here."""
    raise NotImplementedError(
        "SummaryWriter.add_graph draws a TorchScript trace of the model, and autogradcli "
        "produces no TorchScript; log scalars, histograms and images instead"
    )


def writer_class() -> type:
    """tensorboardX.SummaryWriter with tensor-converting ``add_*`` methods (built once)."""
    if _CLASS:
        return _CLASS[0]
    try:
        tensorboardX = import_tensorboardx()
    except ImportError as err:
        raise ImportError(
            "autogradcli.utils.tensorboard.SummaryWriter writes through the tensorboardX "
            "package, which is not installed: pip install tensorboardX"
        ) from err
    base = tensorboardX.SummaryWriter
    methods = {
        name: _converting(getattr(base, name))
        for name in dir(base)
        if name.startswith("add_") and name != "add_graph" and callable(getattr(base, name))
    }
    methods["add_graph"] = _no_graph
    doc = "tensorboardX's SummaryWriter; autogradcli tensors are logged as numpy arrays."
    cls = type("SummaryWriter", (base,), {**methods, "__doc__": doc, "__module__": __name__})
    _CLASS.append(cls)
    return cls
