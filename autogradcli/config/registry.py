"""The names a config may use: layers, losses, optimizers, schedulers, and constructor signatures.

Tables are computed from the packages themselves, so a layer added to ``autogradcli.nn`` is usable
from a config without touching this file.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .. import nn, optim
from ..autograd.function import Function
from ..nn.loss import _Loss
from ..optim import lr_scheduler
from ..trainer.metrics import (  # noqa: F401  (the names a config reads, defined there)
    CLASSIFICATION_LOSSES,
    METRICS,
    MODE_VALUES,
    default_metrics,
    metric_key,
    metric_mode,
    mode_problem,
    resolve_mode,
)
from . import blocks, sequence_layers, table_layers

# The config's own versions of these (``sequence_layers``): one tensor out, causal attention.
_SEQUENCE_LAYERS = ("RNN", "LSTM", "GRU", "TransformerEncoderLayer", "PositionalEmbedding")

# Containers need Python to configure (positional modules): not layers of a config.
_NOT_LAYERS = {"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"}

# The metric registry, monitor modes and the classification losses are the trainer's
# (``trainer.metrics``): a config reads them from there.

# Constructor arguments whose value may be `auto`: taken from the dry forward's input shape.
# dim -1: the last (feature) dim; dim 1: the channel dim of a batch.
# Sizes ``auto`` takes from the data (its kind's ``sizes(state)``), not from the input batch:
# the argument name and the size's name. ``out_features`` only on the model's last layer.
DATA_SIZE_KEYS = {"out_features": "classes", "num_embeddings": "vocab"}

AUTO_KEYS = {
    "in_features": -1,
    "input_size": -1,
    "normalized_shape": -1,
    "in_channels": 1,
    "num_features": 1,
    "num_channels": 1,
}

# Signatures hidden behind *args/**kwargs in the implementation.
_RNN_ARGS = {
    "input_size": inspect.Parameter.empty,
    "hidden_size": inspect.Parameter.empty,
    "num_layers": 1,
    "bias": True,
    "batch_first": False,
    "dropout": 0.0,
    "bidirectional": False,
    "device": None,
    "dtype": None,
    "output": sequence_layers.OUTPUTS[0],  # the config layer's: what it passes on
}
_KNOWN_SIGNATURES: dict[str, dict[str, Any]] = {
    "RNN": {**_RNN_ARGS, "nonlinearity": "tanh"},
    "LSTM": {**_RNN_ARGS, "proj_size": 0},
    "GRU": dict(_RNN_ARGS),
}


class NameTable(Mapping):
    """``name -> class`` for the public names of ``namespace`` that ``accepts(name, obj)``,
    ``extra`` on top. One name is looked up alone, loading only its own module where the
    namespace loads them lazily (``nn``, ``optim``); iterating builds the whole table (every
    module: ~15 ms cold), as a message's suggestions or the help need."""

    def __init__(
        self,
        namespace: Any,
        accepts: Callable[[str, Any], bool],
        extra: dict[str, type] | None = None,
    ) -> None:
        self._namespace, self._accepts, self._extra = namespace, accepts, dict(extra or {})
        self._table: dict[str, type] | None = None

    def __getitem__(self, name: Any) -> type:
        if name in self._extra:
            return self._extra[name]
        if not isinstance(name, str) or name.startswith("_"):
            raise KeyError(name)
        obj = getattr(self._namespace, name, None)
        if not self._accepts(name, obj):
            raise KeyError(name)
        return obj

    def _all(self) -> dict[str, type]:
        if self._table is None:
            found = {
                name: obj
                for name in dir(self._namespace)
                if not name.startswith("_")
                and self._accepts(name, obj := getattr(self._namespace, name))
            }
            self._table = found | self._extra
        return self._table

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _is_layer(name: str, obj: Any) -> bool:
    return (
        isinstance(obj, type)
        and issubclass(obj, nn.Module)
        and not issubclass(obj, _Loss)
        and name not in _NOT_LAYERS
    )


@functools.cache
def layer_types() -> NameTable:
    extra = {"Add": blocks.Add, "Concat": blocks.Concat, "Mul": blocks.Mul}
    extra.update({name: getattr(sequence_layers, name) for name in _SEQUENCE_LAYERS})
    extra["TableEmbeddings"] = table_layers.TableEmbeddings
    return NameTable(nn, _is_layer, extra)


def own_auto(target: Any, key: str) -> bool:
    """Whether layer class ``target`` resolves ``key: auto`` itself (its ``auto_settings``:
    ``TableEmbeddings``' ``embedding_dim``), so neither the input nor the data sizes it."""
    return key in getattr(target, "auto_settings", ())


@functools.cache
def loss_types() -> NameTable:
    return NameTable(nn, lambda name, obj: isinstance(obj, type) and issubclass(obj, _Loss))


def _is_optimizer(name: str, obj: Any) -> bool:
    return (
        isinstance(obj, type)
        and issubclass(obj, optim.Optimizer)
        and obj is not optim.Optimizer
        and obj.__name__ != "LBFGS"  # LBFGS needs a closure the Trainer lacks
    )


@functools.cache
def optimizer_types() -> NameTable:
    return NameTable(optim, _is_optimizer)


@functools.cache
def scheduler_types() -> dict[str, type]:
    return {
        name: obj
        for name in lr_scheduler.__all__
        if isinstance(obj := getattr(lr_scheduler, name), type) and name != "LRScheduler"
    }


def _norm(name: str, suffix: str = "") -> str:
    key = name.lower().replace("_", "").replace("-", "")
    if suffix and key.endswith(suffix) and key != suffix:
        key = key[: -len(suffix)]
    return key


SHORTHANDS = {"mse": "MSELoss", "bce": "BCELoss", "nll": "NLLLoss", "l1": "L1Loss"}


def loose_lookup(name: str, table: dict[str, Any], suffix: str = "") -> str | None:
    """The canonical key of ``table`` for ``name`` ignoring case, ``_`` and a ``suffix``:
    ``cross_entropy`` -> ``CrossEntropyLoss``, ``adamw`` -> ``AdamW``; plus a few shorthands."""
    if name in table:
        return name
    if name.lower() in SHORTHANDS and SHORTHANDS[name.lower()] in table:
        return SHORTHANDS[name.lower()]
    want = _norm(name, suffix)
    for key in table:
        if _norm(key, suffix) == want:
            return key
    return None


def is_function_class(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, Function) and obj is not Function


def is_module_class(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, nn.Module)


@dataclass(frozen=True)
class Signature:
    """What a constructor (or function) accepts by keyword."""

    names: tuple[str, ...]  # accepted keyword names, in order
    required: tuple[str, ...]  # names without a default
    var_keyword: bool  # **kwargs: anything goes
    defaults: dict[str, Any]


def signature_of(obj: Any, skip: tuple[str, ...] = ()) -> Signature:
    """The keyword interface of ``obj`` (a class: its ``__init__`` without ``self``), leaving out
    ``skip`` (``params`` of an optimizer, ``optimizer`` of a scheduler)."""
    known = (
        _KNOWN_SIGNATURES.get(getattr(obj, "__name__", ""))
        if layer_types().get(getattr(obj, "__name__", "")) is obj
        else None
    )
    if known is not None:
        names = tuple(known)
        required = tuple(n for n, d in known.items() if d is inspect.Parameter.empty)
        return Signature(
            names, required, False, {n: d for n, d in known.items() if n not in required}
        )
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return Signature((), (), True, {})
    names, required, defaults, var_kw = [], [], {}, False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            var_kw = True
            continue
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) or p.name in skip:
            continue
        names.append(p.name)
        if p.default is p.empty:
            required.append(p.name)
        else:
            defaults[p.name] = p.default
    return Signature(tuple(names), tuple(required), var_kw, defaults)


def function_arity(fn_cls: Any) -> tuple[int, int | None]:
    """(min, max) number of arguments ``fn_cls.apply`` takes (``forward`` without ``ctx``);
    max is None for ``*args``."""
    try:
        params = list(inspect.signature(fn_cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return 0, None
    lo, hi = 0, 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return lo, None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            hi += 1
            if p.default is p.empty:
                lo += 1
    return lo, hi


def builtin_hooks() -> dict[str, type]:
    """The hooks a config names by ``type``: the trainer's ``BUILTIN_CALLBACKS``."""
    from ..trainer.builtin import BUILTIN_CALLBACKS

    return BUILTIN_CALLBACKS


def hook_defaults(kind: str) -> dict[str, Any]:
    """A built-in hook's settings and their defaults: its class's ``__init__`` signature
    (``schema.REQUIRED`` for an argument without a default), as LightningCLI reads them."""
    from .schema import REQUIRED

    sig = signature_of(builtin_hooks()[kind])
    return {name: sig.defaults.get(name, REQUIRED) for name in sig.names}
