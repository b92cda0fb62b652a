"""Validation of the ``model`` section: a list of layers (a Sequential) or named ``blocks``
wired by name, each layer an ``nn`` layer, a merge block, or the user's Module or Function
class, with its keyword arguments checked against the constructor (``auto`` where allowed)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..nn.function_layer import init_function, init_names
from . import registry
from .checks import describe, is_int, is_num, show
from .errors import Path, did_you_mean
from .imports import is_import_path
from .schema import BLOCK_RESERVED, FUNCTION_KEYS, LAYER_RESERVED

if TYPE_CHECKING:
    from .validator import Validator

__all__ = ["validate_model"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def validate_model(v: Validator, value: Any, path: Path) -> Any:
    """The model: a list of layer specs, or ``{"blocks": ..., "output": ...}``."""
    if isinstance(value, list):
        if not value:
            v.error(path, "the model has no layers")
        layers = [_layer(v, item, path + (i,), in_graph=False) for i, item in enumerate(value)]
        seen: set[str] = set()
        for i, layer in enumerate(layers):
            n = layer.get("name")
            if n is None:
                continue
            if n in seen:
                v.error(path + (i, "name"), f"duplicate layer name {n!r}")
            seen.add(n)
        _ties(v, [(str(x.get("name", i)), x, path + (i,)) for i, x in enumerate(layers)])
        return layers
    if isinstance(value, dict) and "blocks" in value:
        return _graph(v, value, path)
    v.error(
        path,
        f"the model must be a list of layers or a mapping with 'blocks', got {show(value)}",
    )
    return value


def _graph(v: Validator, spec: dict, path: Path) -> dict[str, Any]:
    """A block model: every block's ``input``/``inputs`` resolved to earlier blocks."""
    v.unknown_keys(spec, path, ("blocks", "output"), "a block model")
    blocks = v.mapping(spec["blocks"], path + ("blocks",), "'blocks'")
    if not blocks:
        if blocks is not None:
            v.error(path + ("blocks",), "the model has no blocks")
        return dict(spec)
    out: dict[str, Any] = {}
    previous = "input"
    for name, block in blocks.items():
        bpath = path + ("blocks", name)
        if not isinstance(name, str) or not _IDENT.match(name) or name == "input":
            v.error(
                bpath,
                f"bad block name {name!r}: use a Python identifier other than 'input'",
            )
        resolved = _layer(v, block, bpath, in_graph=True)
        if "input" in resolved and "inputs" in resolved:
            v.error(bpath, "give either 'input' or 'inputs', not both")
        if "inputs" in resolved:
            inputs = resolved["inputs"]
            ok = isinstance(inputs, list) and inputs and all(isinstance(i, str) for i in inputs)
            if not ok:
                v.error(bpath + ("inputs",), f"expected a list of block names, got {show(inputs)}")
                inputs = []
        else:
            inputs = [resolved.get("input", previous)]
            if not isinstance(inputs[0], str):
                v.error(bpath + ("input",), f"expected a block name, got {show(inputs[0])}")
                inputs = []
        key = "inputs" if "inputs" in resolved else "input"
        for j, ref in enumerate(inputs):
            if ref != "input" and ref not in out:
                rpath = bpath + ((key, j) if key == "inputs" else (key,))
                later = ref in blocks
                v.error(
                    rpath,
                    f"block {ref!r} is written after {name!r}: a block reads only earlier blocks"
                    if later
                    else f"unknown block {ref!r}{did_you_mean(ref, ['input', *out])}",
                )
        if key == "input":
            resolved["input"] = inputs[0] if inputs else previous
        out[name] = resolved
        previous = str(name)
    _ties(v, [(str(n), x, path + ("blocks", n)) for n, x in out.items()])
    output = spec.get("output", previous)
    if output not in out:
        v.error(
            path + ("output",),
            f"unknown block {output!r}{did_you_mean(str(output), list(out))}",
        )
    return {"blocks": out, "output": output}


def _ties(v: Validator, named: list[tuple[str, dict[str, Any], Path]]) -> None:
    """Each ``tie`` names a layer (block) written before its own, whose ``weight`` it shares
    (a GPT's head and its token embedding); an index is a layer's default name."""
    names = [name for name, _, _ in named]
    for at, (name, spec, lpath) in enumerate(named):
        if "tie" not in spec:
            continue
        ref = str(spec["tie"]) if is_int(spec["tie"]) else spec["tie"]
        if isinstance(ref, str) and ref in names[:at]:
            spec["tie"] = ref
            continue
        if ref == name:
            why = f"layer {name!r} cannot share its own weight"
        elif isinstance(ref, str) and ref in names:
            why = f"layer {ref!r} is written after {name!r}: tie to an earlier layer"
        else:
            why = f"unknown layer {ref!r}{did_you_mean(str(ref), names[:at])}"
        v.error(lpath + ("tie",), f"{why} (tie: the layer whose weight this one shares)")


def _layer(v: Validator, value: Any, path: Path, in_graph: bool) -> dict[str, Any]:
    """One layer (or block, ``in_graph``) spec, a copy; a bare name becomes ``{type: name}``."""
    if isinstance(value, str):
        value = {"type": value}
    spec = v.mapping(value, path, "a layer")
    if spec is None:
        return {}
    spec = dict(spec)
    if "type" not in spec:
        v.error(path, "the layer needs a 'type'")
        return spec
    kind = spec["type"]
    reserved = BLOCK_RESERVED if in_graph else LAYER_RESERVED
    if not in_graph and "name" in spec:
        n = spec["name"]
        if is_int(n):
            spec["name"] = n = str(n)
        if not (isinstance(n, str) and n and "." not in n):
            v.error(path + ("name",), f"expected a layer name without dots, got {show(n)}")
    target = _layer_target(v, kind, path + ("type",))
    if target is None:
        return spec
    rest = {k: x for k, x in spec.items() if k not in reserved}
    if registry.is_function_class(target):
        _function_layer(v, spec, rest, path, target)
        return spec
    what = f"{kind if not is_import_path(kind) else target.__name__}"
    for key, x in rest.items():
        if (
            x == "auto"
            and key not in registry.AUTO_KEYS
            and key not in registry.DATA_SIZE_KEYS
            and not registry.own_auto(target, key)
        ):
            names = [*registry.AUTO_KEYS, *registry.DATA_SIZE_KEYS]
            v.error(path + (key,), f"'auto' works only for {', '.join(names)}")
    v.kwargs(rest, path, target, what)
    return spec


def _layer_target(v: Validator, kind: Any, path: Path) -> Any:
    """The class a layer's ``type`` names (Module or Function), or None after reporting."""
    if not isinstance(kind, str):
        v.error(path, f"expected a layer name or import path, got {show(kind)}")
        return None
    if is_import_path(kind):
        obj = v.resolve(kind, path)
        if obj is None:
            return None
        if registry.is_module_class(obj) or registry.is_function_class(obj):
            return obj
        v.error(
            path,
            f"{kind!r} is {describe(obj)}, not an nn.Module or autograd.Function subclass",
        )
        return None
    types = registry.layer_types()
    if kind in types:
        return types[kind]
    v.error(path, f"unknown layer type {kind!r}{did_you_mean(kind, types)}")
    return None


def _defines(fn: Any, name: str) -> bool:
    """Whether the Function class ``fn`` (or a base below ``autograd.Function``) defines
    ``name``."""
    from ..autograd.function import Function

    return any(name in vars(c) for c in fn.__mro__ if c not in Function.__mro__)


def _function_layer(v: Validator, spec: dict, rest: dict, path: Path, fn: Any) -> None:
    """An ``autograd.Function`` layer: ``params`` shapes, their ``init``, ``args``, and that
    ``fn.forward`` takes the input, the params and the args."""
    v.unknown_keys(rest, path, FUNCTION_KEYS, f"Function layer {fn.__name__}")
    missing = [m for m in ("forward", "backward") if not _defines(fn, m)]
    if missing:
        v.error(
            path + ("type",),
            f"{fn.__name__} defines no {' and no '.join(missing)}: an autograd.Function needs "
            "@staticmethod forward(ctx, *inputs) and backward(ctx, *grad_outputs)",
        )
        return
    params = spec.get("params", {})
    n_params = 0
    if v.mapping(params, path + ("params",), "'params'") is not None:
        n_params = len(params)
        for pname, shape in params.items():
            ppath = path + ("params", pname)
            if not isinstance(pname, str) or not _IDENT.match(pname):
                v.error(ppath, f"bad parameter name {pname!r}: use a Python identifier")
            dims = [shape] if not isinstance(shape, list) else shape
            if not all((is_int(d) and d >= 1) or d == "auto" for d in dims):
                v.error(
                    ppath,
                    f"expected a shape (a list of positive ints or auto), got {show(shape)}",
                )
    init = spec.get("init", {})
    if v.mapping(init, path + ("init",), "'init'") is not None:
        for pname, ispec in init.items():
            ipath = path + ("init", pname)
            if isinstance(params, dict) and pname not in params:
                v.error(
                    ipath, f"no parameter {pname!r} in params{did_you_mean(str(pname), params)}"
                )
            name = ispec.get("type") if isinstance(ispec, dict) else ispec
            if is_num(name):
                continue
            try:
                init_function(name)
            except KeyError:
                v.error(
                    ipath + (("type",) if isinstance(ispec, dict) else ()),
                    f"unknown init {name!r}{did_you_mean(str(name), init_names())}; expected "
                    "a number or an nn.init name",
                )
    args = spec.get("args", [])
    if not isinstance(args, list):
        v.error(path + ("args",), f"expected a list, got {show(args)}")
        args = []
    lo, hi = registry.function_arity(fn)
    given = 1 + n_params + len(args)
    if given < lo or (hi is not None and given > hi):
        want = f"{lo}" if lo == hi else f"{lo} to {hi}" if hi is not None else f"at least {lo}"
        v.error(
            path,
            f"{fn.__name__}.forward takes {want} arguments after ctx, but the layer passes "
            f"{given} (the input, {n_params} params, {len(args)} args)",
        )
