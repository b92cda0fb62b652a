"""Temporary patches for the length of one trace: the public functions of autogradcli's
namespaces, ``wrap``-ped functions and ``Module.__call__``/``__getattr__`` are swapped for
recording versions, and always put back (exception-safe)."""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import sys
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .names import PUBLIC_NAMESPACES
from .node import map_aggregate
from .proxy import Proxy
from .wrap import WRAPPED

__all__ = ["Patcher", "hold_patches", "public_functions", "recording"]

_MISSING = object()


def _first_proxy(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Proxy | None:
    found: list[Proxy] = []

    def look(a: Any) -> Any:
        if isinstance(a, Proxy) and not found:
            found.append(a)
        return a

    map_aggregate((args, kwargs), look)
    return found[0] if found else None


# nn.functional's functions that torch writes in Python and records with every defaulted
# parameter as a keyword (F.relu(x) records inplace=False); required ones stay positional
RECORDS_DEFAULTS = frozenset({
    "adaptive_avg_pool2d", "affine_grid", "batch_norm", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "cross_entropy", "dropout", "dropout2d", "elu",
    "embedding", "fold", "grid_sample", "group_norm", "hardtanh", "huber_loss", "instance_norm",
    "interpolate", "layer_norm", "leaky_relu", "log_softmax", "max_pool2d", "mse_loss",
    "nll_loss", "normalize", "pad", "relu", "rms_norm", "silu", "smooth_l1_loss", "softmax",
    "unfold",
})  # fmt: skip


def _with_defaults(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    params = inspect.signature(fn).parameters.values()
    bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    required = tuple(bound[p.name] for p in params if p.default is p.empty and p.name in bound)
    defaulted = {p.name: bound.get(p.name, p.default) for p in params if p.default is not p.empty}
    return required, defaulted


def recording(fn: Callable[..., Any], qualname: str | None) -> Callable[..., Any]:
    """``fn``, recorded as a call_function node when an argument is a Proxy."""
    fill = qualname is not None and qualname.startswith("autogradcli.nn.functional.")
    fill = fill and qualname.rsplit(".", 1)[-1] in RECORDS_DEFAULTS

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        proxy = _first_proxy(args, kwargs)
        if proxy is None:
            return fn(*args, **kwargs)
        if fill:
            args, kwargs = _with_defaults(fn, args, kwargs)
        name = qualname.rsplit(".", 1)[-1] if qualname else None  # an alias names its node
        out = proxy.tracer.create_proxy("call_function", fn, args, kwargs, name)
        out.node._qualname = qualname
        if qualname is None:  # wrap-ped or autowrapped (math.sqrt): so marked in the code
            out.node.meta["is_wrapped"] = True
        return out

    wrapper.__fx_original__ = fn  # type: ignore[attr-defined]
    return wrapper


def _is_function(v: Any) -> bool:
    return callable(v) and not isinstance(v, (type, ModuleType))


def public_functions() -> list[tuple[dict[str, Any], str, Any, str]]:
    """(namespace dict, name, function, printed path) for every public function of the loaded
    namespaces a forward reaches (``autogradcli.*``, ``autogradcli.nn.functional.*``...)."""
    found = []
    for ns_name in PUBLIC_NAMESPACES:
        ns = sys.modules.get(ns_name)
        if ns is None:
            continue
        for key, target in getattr(ns, "_LAZY", {}).items():
            if ":" in target:  # a lazy function (autogradcli.kron) loads now, to record as well
                getattr(ns, key)
        for key, value in list(ns.__dict__.items()):
            if not key.startswith("_") and _is_function(value):
                value = getattr(value, "__fx_original__", value)
                found.append((ns.__dict__, key, value, f"{ns_name}.{key}"))
    return found


class Patcher:
    """Records each patch and undoes them all, last first, on ``restore``."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any, Any]] = []
        self._by_id: dict[int, Callable[..., Any]] = {}
        self._scanned: set[int] = set()

    def set_item(self, d: dict[str, Any], name: str, value: Any) -> None:
        """``d[name] = value`` until restore."""
        self._undo.append((d, name, d.get(name, _MISSING), value))
        d[name] = value

    def set_attr(self, obj: Any, name: str, value: Any) -> None:
        """``obj.name = value`` until restore (a class attribute it inherited comes back)."""
        self._undo.append((obj, name, obj.__dict__.get(name, _MISSING), value))
        setattr(obj, name, value)

    def patch_namespaces(
        self,
        autowrap_functions: tuple[Callable[..., Any], ...] = (),
        autowrap_modules: tuple[ModuleType, ...] = (math,),
    ) -> None:
        """Every public autogradcli function, the public functions of ``autowrap_modules``
        (math.sqrt...) and ``autowrap_functions`` record calls on Proxies; ``wrap``-ped names
        in their modules' globals too."""
        for d, name, fn, path in public_functions():
            wrapper = recording(fn, path)  # one per name: aliases print as they were called
            self._by_id.setdefault(id(fn), wrapper)
            self.set_item(d, name, wrapper)
        for module in autowrap_modules:
            for name, fn in list(vars(module).items()):
                if not name.startswith("_") and _is_function(fn):
                    self.set_item(vars(module), name, self._wrapper(fn, None))
        for fn in autowrap_functions:
            self._wrapper(fn, None)
        for g, name in WRAPPED:
            orig = g.get(name, _MISSING)
            if orig is _MISSING:
                orig = getattr(builtins, name, _MISSING)
            if orig is not _MISSING and getattr(orig, "__fx_original__", None) is None:
                self.set_item(g, name, self._wrapper(orig, None))

    def patch_globals(self, g: dict[str, Any]) -> None:
        """Names in a forward's module globals bound to a patched function record too
        (``from autogradcli import cat``)."""
        if id(g) in self._scanned:
            return
        self._scanned.add(id(g))
        for name, value in list(g.items()):
            value = getattr(value, "__fx_original__", value)
            if _is_function(value) and id(value) in self._by_id:
                self.set_item(g, name, self._by_id[id(value)])

    def _wrapper(self, fn: Callable[..., Any], path: str | None) -> Callable[..., Any]:
        w = self._by_id.get(id(fn))
        if w is None:
            w = self._by_id[id(fn)] = recording(fn, path)
        return w

    def restore(self) -> None:
        """Undo every patch still in place (one another patcher replaced since is left alone)."""
        while self._undo:
            obj, name, old, new = self._undo.pop()
            if hasattr(new, "__fx_original__"):
                new._fx_retired = True  # a later patcher restoring to it restores the original
            current = obj.get(name) if isinstance(obj, dict) else obj.__dict__.get(name)
            if current is not new:
                continue
            if getattr(old, "_fx_retired", False):
                old = old.__fx_original__
            if isinstance(obj, dict):
                if old is _MISSING:
                    obj.pop(name, None)
                else:
                    obj[name] = old
            elif old is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, old)


_HELD: dict[str, Any] = {"count": 0, "patcher": None}


def _release() -> None:
    _HELD["count"] -= 1
    if _HELD["count"] == 0:
        _HELD["patcher"].restore()
        _HELD["patcher"] = None


def hold_patches(owner: object) -> None:
    """Keep the namespaces recording (also in ``autogradcli.nn``'s modules, whose layers call
    them) while ``owner`` lives: Proxies built outside a trace, on a GraphAppendingTracer,
    go through autogradcli's functions and layers as they do while tracing."""
    if _HELD["count"] == 0:
        patcher = Patcher()
        patcher.patch_namespaces()
        for name, module in list(sys.modules.items()):
            if name.startswith("autogradcli.nn") and module is not None:
                patcher.patch_globals(vars(module))
        _HELD["patcher"] = patcher
    _HELD["count"] += 1
    weakref.finalize(owner, _release)
