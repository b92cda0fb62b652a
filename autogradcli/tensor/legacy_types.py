"""PyTorch's legacy tensor types: ``Tensor(3, 4)``, ``FloatTensor([...])``, ``x.type()``.

``FloatTensor``, ``LongTensor``... are constructors (sizes or data, of their dtype) and
``isinstance`` targets (a tensor of that dtype on the CPU), as in PyTorch, where old programs still
use them. Names and messages are PyTorch's (``'torch.FloatTensor'``), so output compared with a
PyTorch page matches.
"""

from __future__ import annotations

from typing import Any

from . import dtype as dtypes
from .tensor import Size, Tensor, wrap

__all__ = [
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "legacy_array",
    "tensor_type",
    "type_name",
    "typename",
]

# dtype name -> (legacy type name, PyTorch's C++ scalar name used in its TypeError)
_NAMES = {
    "float32": ("FloatTensor", "float"),
    "float64": ("DoubleTensor", "double"),
    "float16": ("HalfTensor", "c10::Half"),
    "int64": ("LongTensor", "long int"),
    "int32": ("IntTensor", "int"),
    "int16": ("ShortTensor", "short int"),
    "int8": ("CharTensor", "signed char"),
    "uint8": ("ByteTensor", "unsigned char"),
    "bool": ("BoolTensor", "bool"),
}


def type_name(t: Tensor) -> str:
    """``x.type()``: ``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``..."""
    kind = _NAMES.get(t.dtype.name, ("Tensor", ""))[0]
    return f"torch.{'cuda.' if t.is_cuda else ''}{kind}"


def typename(obj: Any) -> str:
    """``torch.typename``: a tensor's legacy type name, else the object's qualified type name."""
    if isinstance(obj, Tensor):
        return type_name(obj)
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        module = type(obj).__module__
        qualname = type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def _is_size_list(args: tuple[Any, ...]) -> bool:
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def _options(dtype_name: str) -> str:
    cname = _NAMES[dtype_name][1]
    return (
        f"TensorOptions(dtype={cname}, device=cpu, layout=Strided, requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))"
    )


def legacy_array(args: tuple[Any, ...], dtype: Any, device: Any, strict: bool) -> Any:
    """The array for ``Tensor(*args)`` / ``FloatTensor(*args)``: sizes, data, or another tensor.

    ``strict`` (the typed constructors) refuses a tensor of another dtype, as PyTorch does; plain
    ``Tensor(other)`` aliases ``other`` whatever its dtype.
    """
    from .factory import as_array, empty

    dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if not args:
        args = (0,)  # Tensor(): an empty 1-d tensor
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    elif len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, Tensor):
            if strict and data.dtype != dt:
                raise TypeError(f"expected {_options(dt.name)} (got {_options(data.dtype.name)})")
            return data._data
        if isinstance(data, (float, complex, bool)) or data is None:
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return as_array(data, dtype=dt, device=device, copy=True)
    if not _is_size_list(args):
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(
            f"new() received an invalid combination of arguments - got ({got}), but expected one "
            "of:\n * (*, torch.device device = None)\n * (Tensor other)\n"
            " * (tuple of ints size, *, torch.device device = None)\n"
            " * (object data, *, torch.device device = None)"
        )
    return empty(*args, dtype=dt, device=device)._data


class _LegacyTensorType(type):
    """The metaclass of ``FloatTensor`` & co: calling builds a tensor, isinstance checks the dtype."""

    _dtype: dtypes.DType
    _cuda: bool

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[override]
        device = device if device is not None or not cls._cuda else "cuda"
        return wrap(legacy_array(args, cls._dtype, device, strict=True))

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls._dtype and obj.is_cuda == cls._cuda

    def __subclasscheck__(cls, sub: Any) -> bool:
        return sub is cls

    def __repr__(cls) -> str:
        return f"<class 'torch.{'cuda.' if cls._cuda else ''}{cls.__name__}'>"

    @property
    def dtype(cls) -> dtypes.DType:
        return cls._dtype


def _legacy_type(name: str, dtype: dtypes.DType, cuda: bool = False) -> type:
    module = "autogradcli.cuda" if cuda else "autogradcli"
    doc = f"{dtype} tensors{' on the GPU' if cuda else ''}."
    return _LegacyTensorType(
        name, (), {"_dtype": dtype, "_cuda": cuda, "__module__": module, "__doc__": doc}
    )


FloatTensor = _legacy_type("FloatTensor", dtypes.float32)
DoubleTensor = _legacy_type("DoubleTensor", dtypes.float64)
HalfTensor = _legacy_type("HalfTensor", dtypes.float16)
LongTensor = _legacy_type("LongTensor", dtypes.int64)
IntTensor = _legacy_type("IntTensor", dtypes.int32)
ShortTensor = _legacy_type("ShortTensor", dtypes.int16)
CharTensor = _legacy_type("CharTensor", dtypes.int8)
ByteTensor = _legacy_type("ByteTensor", dtypes.uint8)
BoolTensor = _legacy_type("BoolTensor", dtypes.bool_)

_BY_NAME = {
    cls.__name__: cls
    for cls in (
        FloatTensor,
        DoubleTensor,
        HalfTensor,
        LongTensor,
        IntTensor,
        ShortTensor,
        CharTensor,
        ByteTensor,
        BoolTensor,
    )
}


# ``autogradcli.cuda.FloatTensor`` & co: the same types for tensors on the GPU
CUDA_TYPES = {name: _legacy_type(name, cls._dtype, cuda=True) for name, cls in _BY_NAME.items()}


def tensor_type(t: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """``x.type()``: the type name; ``x.type(torch.DoubleTensor)`` / ``x.type('torch.LongTensor')``
    / ``x.type(torch.int32)``: ``x`` converted (``x`` itself when nothing changes)."""
    if dtype is None:
        return type_name(t)
    device = None
    if isinstance(dtype, str):
        name = dtype
        if name.startswith("torch.cuda."):
            device, name = "cuda", "torch." + name[len("torch.cuda.") :]
        cls = _BY_NAME.get(name[len("torch.") :]) if name.startswith("torch.") else None
        if cls is None:
            raise ValueError(f"invalid type: '{dtype}'")
        target = cls._dtype
    elif isinstance(dtype, _LegacyTensorType):
        target = dtype._dtype
        device = "cuda" if dtype._cuda else None
    else:
        target = dtypes.to_dtype(dtype)
    if target == t.dtype and (device is None or t.is_cuda):
        return t
    return t.to(device=device, dtype=target) if device and not t.is_cuda else t.to(target)
