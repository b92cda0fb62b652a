"""The unpicklers of PyTorch-layout files: an allow-list one (``weights_only``, the default) that
runs nothing but the rebuilding of tensors and plain containers, and the full one a user gets
only by passing ``weights_only=False``.

The allow-list is PyTorch's ``weights_only`` list: ``torch._utils._rebuild_tensor_v2`` and the
other rebuild functions, the storage types, dtypes, ``torch.Size``, ``torch.device``,
``OrderedDict``, ``Counter``, ``set``, ``complex``, bytes, plus what the user listed with
:func:`~autogradcli.serialization.add_safe_globals`. Any other global is refused by name before
anything runs, and only listed classes may be instantiated (NEWOBJ) or have state set (BUILD).
"""

from __future__ import annotations

import _compat_pickle
import codecs
import pickle
from collections import Counter, OrderedDict
from typing import IO, Any

from .. import backend
from ..nn.parameter import Parameter
from ..tensor.tensor import Size, Tensor
from .format import SerializationError
from .safe_globals import allowed_by_user
from .torch_tensors import STORAGE_DTYPES, TORCH_DTYPES, StorageType, TensorBuilder

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, the default value of the `weights_only` argument of `torch.load` changed "
    "from `False` to `True`, and autogradcli.load does the same. Re-running `load` with "
    "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code "
    "execution. Do it only if you got the file from a trusted source."
)


class WeightsOnlyError(SerializationError, pickle.UnpicklingError):
    """A ``weights_only`` load met something outside the allow-list (PyTorch raises
    ``pickle.UnpicklingError`` here; this is both that and a ``SerializationError``)."""


def unsupported_global(full_path: str) -> WeightsOnlyError:
    """PyTorch's error for a global outside the allow-list, with autogradcli's names."""
    return WeightsOnlyError(
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint."
        f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` "
        "please check the recommended steps in the following error message.\n\t"
        f"WeightsUnpickler error: Unsupported global: GLOBAL {full_path} was not an allowed "
        "global by default. Please use `autogradcli.serialization.add_safe_globals("
        f"[{full_path}])` or the `autogradcli.serialization.safe_globals([{full_path}])` "
        "context manager to allowlist this global if you trust this class/function."
    )


def _weights_error(message: str) -> WeightsOnlyError:
    return WeightsOnlyError(
        f"Weights only load failed. {UNSAFE_MESSAGE}\nWeightsUnpickler error: {message}"
    )


def _bytearray(*args: Any) -> bytearray:
    if args and not isinstance(args[0], (bytes, bytearray, str)):
        raise _weights_error("bytearray() of something other than bytes")  # bytearray(10**12)
    return bytearray(*args)


def _encode(text: Any, encoding: Any = "utf-8") -> bytes:
    if not isinstance(text, str) or codecs.lookup(encoding).name not in ("iso8859-1", "utf-8"):
        raise _weights_error(f"_codecs.encode with {encoding!r}")
    return codecs.encode(text, encoding)


def _device(*args: Any) -> backend.Device:
    return backend.Device(*args)


def _size(*args: Any) -> Size:
    return Size(*args)


def torch_globals(builder: TensorBuilder) -> dict[str, Any]:
    """PyTorch's ``weights_only`` allow-list: each global's name -> what autogradcli builds."""
    out: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "builtins.set": set,
        "builtins.complex": complex,
        "builtins.bytearray": _bytearray,
        "_codecs.encode": _encode,
        "torch.Size": _size,
        "torch.device": _device,
        "torch.Tensor": Tensor,
        "torch.nn.parameter.Parameter": Parameter,
        "torch._utils._rebuild_tensor_v2": builder.rebuild_tensor_v2,
        "torch._utils._rebuild_tensor": builder.rebuild_tensor,
        "torch._utils._rebuild_parameter": builder.rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": builder.rebuild_parameter,
        "torch._tensor._rebuild_from_type_v2": builder.rebuild_from_type_v2,
    }
    for name in STORAGE_DTYPES:
        out[f"torch.{name}"] = StorageType(name)
    out["torch.storage.UntypedStorage"] = out["torch.UntypedStorage"]
    for name, dt in TORCH_DTYPES.items():
        out[f"torch.{name}"] = dt
    for kind in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte"):
        out[f"torch.{kind}Tensor"] = Tensor  # legacy tensor types: names only, never called
    out["torch.BoolTensor"] = Tensor
    return out


def fix_name(module: str, name: str) -> tuple[str, str]:
    """Python 2 names in protocol-2 pickles (``__builtin__.set``) as Python 3 spells them."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class WeightsUnpickler(pickle._Unpickler):  # the Python implementation: its opcodes can be gated
    """Unpickle with the allow-list; storages come from ``persistent_load``."""

    def __init__(self, file: IO[bytes], builder: TensorBuilder, persistent_load: Any) -> None:
        super().__init__(file, encoding="utf-8")
        self._allowed = torch_globals(builder)
        self._user = allowed_by_user()
        markers = (Tensor,)  # torch.Tensor only names a type: Tensor(10**12) would allocate
        self._callable = {
            id(v) for v in (*self._allowed.values(), *self._user.values()) if v not in markers
        }
        self._classes = {id(v) for v in self._user.values()}
        self._persistent = persistent_load

    def persistent_load(self, pid: Any) -> Any:
        return self._persistent(pid)

    def find_class(self, module: str, name: str) -> Any:
        module, name = fix_name(module, name)
        full = f"{module}.{name}"
        if full in self._user:
            return self._user[full]
        if full in self._allowed:
            return self._allowed[full]
        raise unsupported_global(full)

    def _load_reduce(self) -> None:
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in self._callable:
            raise _weights_error(f"Trying to call reduce for unrecognized function {func!r}")
        self.stack[-1] = func(*args)

    def _new(self, cls: Any, args: Any, kwargs: Any) -> Any:
        if cls is Parameter:
            return Parameter(*args, **kwargs)
        if id(cls) not in self._classes and cls not in (OrderedDict, Counter, set):
            raise _weights_error(
                "Can only create new object for nn.Parameter or classes allowlisted via "
                f"`add_safe_globals` but got {cls!r}"
            )
        return cls.__new__(cls, *args, **kwargs)

    def _load_newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, {}))

    def _load_newobj_ex(self) -> None:
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, kwargs))

    def _load_build(self) -> None:
        inst = self.stack[-2]  # under the state
        if type(inst) is OrderedDict:  # a state dict's _metadata
            state = self.stack.pop()
            if not isinstance(state, dict):
                raise _weights_error("BUILD of an OrderedDict with a non-dict state")
            inst.__dict__.update(state)
            return
        if id(type(inst)) not in self._classes:
            raise _weights_error(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)!r}"
            )
        pickle._Unpickler.load_build(self)

    def _refuse_inst(self) -> None:
        raise _weights_error("the INST/OBJ opcodes (protocol 0/1 objects) are not supported")

    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.REDUCE[0]] = _load_reduce
    dispatch[pickle.NEWOBJ[0]] = _load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = _load_newobj_ex
    dispatch[pickle.BUILD[0]] = _load_build
    dispatch[pickle.INST[0]] = _refuse_inst
    dispatch[pickle.OBJ[0]] = _refuse_inst


class FullUnpickler(pickle.Unpickler):
    """Unpickle anything (``weights_only=False``: the user trusts the file), PyTorch's tensor
    globals mapped to autogradcli's; other PyTorch objects are refused by name."""

    def __init__(self, file: IO[bytes], builder: TensorBuilder, persistent_load: Any) -> None:
        super().__init__(file, encoding="utf-8")
        self._torch = torch_globals(builder)
        self._persistent = persistent_load

    def persistent_load(self, pid: Any) -> Any:
        return self._persistent(pid)

    def find_class(self, module: str, name: str) -> Any:
        fixed = fix_name(module, name)
        full = ".".join(fixed)
        if full in self._torch:
            return self._torch[full]
        if fixed[0] == "torch" or fixed[0].startswith("torch."):
            raise SerializationError(
                f"the file holds the PyTorch object {full}, which autogradcli cannot rebuild; "
                "in PyTorch, save the model's state_dict() instead and load it here with "
                "model.load_state_dict(autogradcli.load(path))"
            )
        return super().find_class(module, name)


def unpickler(
    file: IO[bytes], builder: TensorBuilder, persistent_load: Any, weights_only: bool
) -> pickle.Unpickler | pickle._Unpickler:
    """The allow-list unpickler, or the full one when ``weights_only`` is False."""
    cls = WeightsUnpickler if weights_only else FullUnpickler
    return cls(file, builder, persistent_load)
