"""``torch.nn.modules``: the layers under PyTorch's own submodule paths
(``nn.modules.linear.Linear``, ``nn.modules.activation.MultiheadAttention``...), which programs
name in ``isinstance`` checks and safe-globals lists. Each submodule here is a namespace over the
layers autogradcli defines in its own files (PyTorch's name -> ours)."""

from __future__ import annotations

import sys
import types

from .. import (
    activation,
    attention,
    channel_dropout,
    container,
    conv,
    conv_transpose,
    dropout,
    flatten,
    instancenorm,
    linear,
    loss,
    module,
    normalization,
    padding,
    pooling,
    rnn,
    sparse,
    transformer,
    transformer_layers,
    upsampling,
    vision,
)

# PyTorch's submodule of torch.nn.modules -> the autogradcli.nn modules defining its layers
_SOURCES: dict[str, tuple[types.ModuleType, ...]] = {
    "activation": (activation, attention),
    "batchnorm": (normalization,),
    "container": (container,),
    "conv": (conv, conv_transpose),
    "dropout": (dropout, channel_dropout),
    "flatten": (flatten,),
    "instancenorm": (instancenorm,),
    "linear": (linear, attention),
    "loss": (loss,),
    "module": (module,),
    "normalization": (normalization,),
    "padding": (padding,),
    "pixelshuffle": (vision,),
    "pooling": (pooling,),
    "rnn": (rnn,),
    "sparse": (sparse,),
    "transformer": (transformer, transformer_layers),
    "upsampling": (upsampling,),
}


def _namespace(name: str, sources: tuple[types.ModuleType, ...]) -> types.ModuleType:
    ns = types.ModuleType(f"{__name__}.{name}", f"torch.nn.modules.{name} (autogradcli's layers)")
    for src in sources:
        for attr in getattr(src, "__all__", ()):
            setattr(ns, attr, getattr(src, attr))
    if name == "linear":
        ns.NonDynamicallyQuantizableLinear = attention.NonDynamicallyQuantizableLinear
    sys.modules[ns.__name__] = ns
    return ns


__all__: list[str] = []
for _name, _sources in _SOURCES.items():
    globals()[_name] = _namespace(_name, _sources)
    for _src in _sources:
        for _attr in getattr(_src, "__all__", ()):
            globals()[_attr] = getattr(_src, _attr)
            __all__.append(_attr)
