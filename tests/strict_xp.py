"""A strict stand-in for cupy, so CI (no GPU, no cupy) proves the array-backend seam.

``StrictArray`` wraps a numpy array and behaves like ``cupy.ndarray`` where it matters:

- it is not a numpy array: ``np.asarray(a)`` raises cupy's TypeError (``__array__``), numpy
  ufuncs (``np.exp(a)``) raise (``__array_ufunc__ = None``) and so do numpy functions
  (``np.sum(a)``, via ``__array_function__``);
- operators, methods and attributes delegate to the wrapped array and re-wrap the results;
  numpy scalars from reductions and indexing come back as 0-d arrays, as cupy returns them;
- mixing in a host array (``a + np.ones(3)``, ``strict_cupy.exp(np_array)``) raises, as cupy does;
- ``strict_cupy.fuse`` runs a fused function eagerly but only as cupy could fuse it: device
  arrays and scalars in, elementwise ufuncs and operators inside (methods, indexing, reductions,
  other functions and Python truth tests on arrays raise, as cupy's tracer refuses them).

``strict_cupy`` mirrors the numpy namespace the way cupy does (``strict_cupy.exp``,
``strict_cupy.random.default_rng``, ``strict_cupy.lib.stride_tricks.as_strided``,
``strict_cupy.asnumpy``, ``strict_cupy.cuda``...). Install it with
``autogradcli.backend.use_cuda_module(strict_cupy, StrictArray)`` (see ``conftest.py``).
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.special

IMPLICIT_MSG = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
    "NumPy array explicitly."
)
_SCALARS = (bool, int, float, complex, np.generic)
_FUSING: list[str | None] = [None]  # the fused function being run by ``strict_cupy.fuse``


def _is_full_slice(key: Any) -> bool:
    return type(key) is slice and key == slice(None)


def _refuse_in_fusion(what: str) -> None:
    if _FUSING[0] is not None:
        raise TypeError(
            f"{what} cannot be fused: cupy.fuse kernel '{_FUSING[0]}' takes ufuncs only"
        )


def _host_error(x: Any) -> TypeError:
    return TypeError(
        f"Unsupported type {type(x)} (a host array mixed into a device op; move it with "
        "xp.asarray / backend.to_device first)"
    )


def _unwrap(x: Any) -> Any:
    """A device function's argument as numpy; host arrays are refused, as cupy refuses them."""
    t = type(x)
    if t is StrictArray:
        return x._a
    if t is np.ndarray:
        raise _host_error(x)
    if t is list or t is tuple:
        return t([_unwrap(v) for v in x])
    return x


def _unwrap_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: _unwrap(v) for k, v in kwargs.items()} if kwargs else kwargs


def _wrap(r: Any) -> Any:
    """numpy results as device arrays (scalars as 0-d arrays); everything else unchanged."""
    t = type(r)
    if t is np.ndarray:
        return StrictArray(r)
    if isinstance(r, np.generic):
        return StrictArray(np.asarray(r))
    if t is tuple or t is list:
        return t([_wrap(v) for v in r])
    if isinstance(r, tuple) and hasattr(r, "_fields"):  # namedtuple results (linalg.slogdet...)
        return t(*[_wrap(v) for v in r])
    return r


def _operand(o: Any) -> Any:
    """An operator's other operand: a device array or a scalar; a host array raises."""
    t = type(o)
    if t is StrictArray:
        return o._a
    if t is np.ndarray:
        raise _host_error(o)
    if isinstance(o, _SCALARS):
        return o
    return NotImplemented


def _key(k: Any) -> Any:
    """Index keys: like cupy, lists and numpy index arrays are accepted (and moved)."""
    if type(k) is StrictArray:
        return k._a
    if type(k) is tuple:
        return tuple([_key(v) for v in k])
    return k


class _Pointer:
    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


class _CudaDevice:
    """``cupy.cuda.Device``: an id, usable as a context manager."""

    def __init__(self, device: int | None = None) -> None:
        self.id = 0 if device is None else int(device)
        if not 0 <= self.id < _DEVICE_COUNT:
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {self.id}")

    def __enter__(self) -> _CudaDevice:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _CudaDevice) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"

    def synchronize(self) -> None:
        return None


_DEVICE_COUNT = 1


class _Flags:
    """``cupy.ndarray.flags``: contiguity and ownership only (no ``writeable``, as in cupy)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, flags: Any) -> None:
        self.c_contiguous = flags.c_contiguous
        self.f_contiguous = flags.f_contiguous
        self.owndata = flags.owndata

    def __getitem__(self, key: str) -> bool:
        names = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous"}
        return getattr(self, names.get(key, key.lower()))


class StrictArray:
    """A device array stand-in: a numpy array that refuses to be treated as one."""

    __slots__ = ("__weakref__", "_a")
    __array_ufunc__ = None  # np.exp(a) raises; np.float32(2) * a defers to our __rmul__
    __array_priority__ = 100

    def __init__(self, a: np.ndarray) -> None:
        if type(a) is not np.ndarray:
            raise TypeError(f"StrictArray wraps a numpy.ndarray, got {type(a).__name__}")
        self._a = a

    # --------------------------------------------------------------- refusing numpy
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(IMPLICIT_MSG)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise TypeError(
            f"numpy.{getattr(func, '__name__', func)}() was called on a device array; "
            f"{IMPLICIT_MSG} (use xp = backend.array_module(arr) and xp.{getattr(func, '__name__', '...')})"
        )

    # --------------------------------------------------------------- attributes
    shape = property(
        lambda self: self._a.shape, lambda self, v: setattr(self._a, "shape", v), doc="shape"
    )
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: _Flags(self._a.flags))
    T = property(lambda self: StrictArray(self._a.T))
    mT = property(lambda self: StrictArray(self._a.mT))
    real = property(lambda self: StrictArray(self._a.real))
    imag = property(lambda self: StrictArray(self._a.imag))

    @property
    def base(self) -> Any:
        b = self._a.base
        return None if b is None else StrictArray(b) if type(b) is np.ndarray else b

    @property
    def device(self) -> _CudaDevice:
        return _CudaDevice(0)

    @property
    def data(self) -> _Pointer:
        return _Pointer(int(self._a.__array_interface__["data"][0]))

    def get(self, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
        """A host copy, as ``cupy.ndarray.get()``."""
        if out is not None:
            out[...] = self._a
            return out
        return self._a.copy(order=order)

    def item(self) -> Any:
        return self._a.item()

    def tolist(self) -> Any:
        return self._a.tolist()

    def fill(self, value: Any) -> None:
        if type(value) is np.ndarray and value.ndim:
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a.fill(_operand(value) if type(value) is StrictArray else value)

    # --------------------------------------------------------------- Python protocol
    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        for i in range(len(self._a)):
            yield self[i]

    def __bool__(self) -> bool:
        _refuse_in_fusion("a truth test on an array")
        return bool(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __repr__(self) -> str:
        return repr(self._a)

    def __str__(self) -> str:
        return str(self._a)

    def __format__(self, spec: str) -> str:
        return format(self._a.item() if self._a.ndim == 0 else self._a, spec)

    def __reduce__(self) -> Any:
        return (StrictArray, (self._a,))

    def __getitem__(self, key: Any) -> Any:
        _refuse_in_fusion("indexing")
        return _wrap(self._a[_key(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        if _FUSING[0] is not None and key is not Ellipsis and not _is_full_slice(key):
            _refuse_in_fusion("assignment other than a[...] = b")
        if type(value) is np.ndarray and value.ndim:
            raise _host_error(value)
        self._a[_key(key)] = value._a if type(value) is StrictArray else value

    __hash__ = None  # type: ignore[assignment]


def _method(name: str) -> Any:
    def method(self: StrictArray, *args: Any, **kwargs: Any) -> Any:
        _refuse_in_fusion(f"ndarray.{name}")
        return _wrap(getattr(self._a, name)(*_unwrap(args), **_unwrap_kwargs(kwargs)))

    method.__name__ = name
    return method


for _name in [
    "all",
    "any",
    "argmax",
    "argmin",
    "argsort",
    "astype",
    "clip",
    "conj",
    "copy",
    "cumprod",
    "cumsum",
    "diagonal",
    "dot",
    "flatten",
    "max",
    "mean",
    "min",
    "nonzero",
    "prod",
    "ravel",
    "repeat",
    "reshape",
    "round",
    "sort",
    "squeeze",
    "std",
    "sum",
    "swapaxes",
    "take",
    "trace",
    "transpose",
    "var",
    "view",
]:
    setattr(StrictArray, _name, _method(_name))


def _binary(name: str) -> Any:
    op = getattr(np.ndarray, name)

    def binary(self: StrictArray, other: Any) -> Any:
        o = _operand(other)
        if o is NotImplemented:
            return NotImplemented
        return _wrap(op(self._a, o))

    binary.__name__ = name
    return binary


def _inplace(name: str) -> Any:
    op = getattr(np.ndarray, name)

    def inplace(self: StrictArray, other: Any) -> Any:
        o = _operand(other)
        if o is NotImplemented:
            return NotImplemented
        op(self._a, o)
        return self

    inplace.__name__ = name
    return inplace


def _unary(name: str) -> Any:
    op = getattr(np.ndarray, name)

    def unary(self: StrictArray) -> Any:
        return _wrap(op(self._a))

    unary.__name__ = name
    return unary


for _op in [
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
]:
    setattr(StrictArray, f"__{_op}__", _binary(f"__{_op}__"))
    setattr(StrictArray, f"__r{_op}__", _binary(f"__r{_op}__"))
    setattr(StrictArray, f"__i{_op}__", _inplace(f"__i{_op}__"))
for _op in ["eq", "ne", "lt", "le", "gt", "ge"]:
    setattr(StrictArray, f"__{_op}__", _binary(f"__{_op}__"))
for _op in ["neg", "pos", "abs", "invert"]:
    setattr(StrictArray, f"__{_op}__", _unary(f"__{_op}__"))


# ------------------------------------------------------------------ the module
def _device_function(fn: Any, name: str, elementwise: bool = False) -> Any:
    def device_fn(*args: Any, **kwargs: Any) -> Any:
        if not elementwise:
            _refuse_in_fusion(name)
        out = kwargs.get("out")
        r = fn(*_unwrap(args), **_unwrap_kwargs(kwargs))
        if out is not None and type(out) is StrictArray and r is out._a:
            return out
        return _wrap(r)

    device_fn.__name__ = name
    device_fn.__qualname__ = name
    device_fn.__wrapped__ = fn  # type: ignore[attr-defined]
    return device_fn


class _DeviceUfunc:
    """A ufunc over device arrays, with ``at``/``reduce``/``accumulate``/``outer``."""

    def __init__(self, uf: np.ufunc) -> None:
        self._uf = uf
        self.__name__ = uf.__name__
        self.nin, self.nout = uf.nin, uf.nout
        # generalized ufuncs (matmul) are not elementwise: cupy.fuse has no place for them
        self._fn = _device_function(uf, uf.__name__, elementwise=uf.signature is None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for a in args:
            if type(a) is list or type(a) is tuple:
                raise TypeError(f"Unsupported type {type(a)}")
        return self._fn(*args, **kwargs)

    def at(self, a: StrictArray, indices: Any, b: Any = None) -> None:
        if type(a) is not StrictArray:
            raise _host_error(a)
        args = (_key(indices),) if b is None else (_key(indices), _unwrap(b))
        self._uf.at(a._a, *args)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return _device_function(self._uf.reduce, "reduce")(*args, **kwargs)

    def accumulate(self, *args: Any, **kwargs: Any) -> Any:
        if self._uf.__name__ not in ("add", "multiply"):  # cupy 14 accumulates these two only
            raise NotImplementedError(f"`cupy_{self._uf.__name__}.accumulate` is not supported yet")
        return _device_function(self._uf.accumulate, "accumulate")(*args, **kwargs)

    def outer(self, *args: Any, **kwargs: Any) -> Any:
        return _device_function(self._uf.outer, "outer")(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<strict ufunc '{self.__name__}'>"


class _StrictNamespace(types.ModuleType):
    """A numpy (sub)module seen through the device: functions take and give device arrays."""

    def __init__(self, name: str, np_module: Any) -> None:
        super().__init__(name)
        self._np = np_module

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            attr = getattr(self._np, name)
        except AttributeError:
            raise AttributeError(
                f"module '{self.__name__}' has no attribute '{name}' (numpy has none either)"
            ) from None
        if isinstance(attr, np.ufunc):
            value: Any = _DeviceUfunc(attr)
        elif isinstance(attr, type) or not callable(attr):
            value = attr  # dtypes, classes (finfo, iinfo), constants pass through
        elif isinstance(attr, types.ModuleType):
            value = _StrictNamespace(f"{self.__name__}.{name}", attr)
        else:  # cupy.where calls its ufunc when fusing, so cupy.fuse takes it
            value = _device_function(attr, name, elementwise=name == "where")
        setattr(self, name, value)  # cache
        return value


class _Generator:
    """``cupy.random.Generator``: only the methods cupy has (no ``normal``, no ``permutation``)."""

    def __init__(self, seed: Any = None) -> None:
        self._g = np.random.default_rng(seed)

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        r = _wrap(self._g.random(size, dtype=dtype))
        if out is not None:
            out[...] = r
            return out
        return r

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        if np.dtype(dtype).char not in "fd":
            raise TypeError(f"Unsupported dtype {np.dtype(dtype).name} for standard_normal")
        r = _wrap(self._g.standard_normal(size, dtype=dtype))
        if out is not None:
            out[...] = r
            return out
        return r

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = np.float64):
        return _wrap(self._g.uniform(_unwrap(low), _unwrap(high), size).astype(dtype, copy=False))

    def integers(
        self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64, endpoint=False
    ) -> Any:
        return _wrap(np.asarray(self._g.integers(low, high, size, dtype=dtype, endpoint=endpoint)))

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64, **kw: Any) -> Any:
        return _wrap(self._g.standard_exponential(size).astype(dtype, copy=False))

    def exponential(self, scale: float = 1.0, size: Any = None) -> Any:
        return _wrap(np.asarray(self._g.exponential(scale, size)))

    def gamma(self, shape: Any, scale: float = 1.0, size: Any = None) -> Any:
        return _wrap(np.asarray(self._g.gamma(_unwrap(shape), scale, size)))

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = np.float64) -> Any:
        return _wrap(np.asarray(self._g.standard_gamma(_unwrap(shape), size, dtype=dtype)))

    def beta(self, a: Any, b: Any, size: Any = None, dtype: Any = np.float64) -> Any:
        return _wrap(np.asarray(self._g.beta(_unwrap(a), _unwrap(b), size)).astype(dtype))

    def binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        return _wrap(np.asarray(self._g.binomial(_unwrap(n), _unwrap(p), size)))

    def poisson(self, lam: Any = 1.0, size: Any = None) -> Any:
        return _wrap(np.asarray(self._g.poisson(_unwrap(lam), size)))

    def geometric(self, p: Any, size: Any = None) -> Any:
        return _wrap(np.asarray(self._g.geometric(_unwrap(p), size)))


def _default_rng(seed: Any = None) -> _Generator:
    return _Generator(seed)


def _asarray(a: Any, dtype: Any = None, order: Any = None, *, blocking: bool = False) -> Any:
    """Host data (numpy arrays, lists, scalars) or a device array, as a device array."""
    if type(a) is StrictArray:
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    if isinstance(a, (list, tuple)) and any(type(v) is StrictArray for v in a):
        a = [v.get() if type(v) is StrictArray else v for v in a]
    return StrictArray(np.array(a, dtype=dtype, order=order or "K", copy=True))


def _array(a: Any, dtype: Any = None, copy: bool = True, order: str = "K", **kw: Any) -> Any:
    if type(a) is StrictArray:
        out = a.astype(dtype) if dtype is not None else a
        return out.copy() if copy and out is a else out
    return _asarray(a, dtype, order)


def _asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
    if type(a) is StrictArray:
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def _fuse(*args: Any, kernel_name: str | None = None) -> Any:
    """``cupy.fuse``: the decorated function runs (eagerly) on device arrays and scalars only,
    under the tracer's restrictions; a host array among the arguments raises cupy's TypeError."""

    def decorate(func: Any) -> Any:
        name = kernel_name or func.__name__

        def fused(*a: Any) -> Any:
            for x in a:
                if x is not None and type(x) is not StrictArray and not isinstance(x, _SCALARS):
                    types_ = ", ".join(repr(type(v)) for v in a)
                    raise TypeError(f"Invalid argument type for '{name}': ({types_})")
            if not any(type(x) is StrictArray for x in a):
                raise TypeError(f"'{name}' was called with no device array (a seam leak)")
            prev, _FUSING[0] = _FUSING[0], name
            try:
                return func(*a)
            finally:
                _FUSING[0] = prev

        fused.__name__ = name
        return fused

    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return decorate(args[0])
    return decorate


def _get_array_module(*args: Any) -> Any:
    return strict_cupy if any(type(a) is StrictArray for a in args) else np


class _Stream:
    def synchronize(self) -> None:
        return None


class _StreamNamespace:
    null = _Stream()


_runtime = types.SimpleNamespace(getDeviceCount=lambda: _DEVICE_COUNT)
_cuda = types.SimpleNamespace(
    runtime=_runtime,
    Stream=_StreamNamespace,
    Device=_CudaDevice,
    is_available=lambda: True,
)

strict_cupy = _StrictNamespace("strict_cupy", np)
strict_cupy.ndarray = StrictArray  # type: ignore[attr-defined]
strict_cupy.asarray = _asarray  # type: ignore[attr-defined]
strict_cupy.asanyarray = _asarray  # type: ignore[attr-defined]
strict_cupy.ascontiguousarray = lambda a, dtype=None: _asarray(a, dtype).copy()  # type: ignore[attr-defined]
strict_cupy.array = _array  # type: ignore[attr-defined]
strict_cupy.asnumpy = _asnumpy  # type: ignore[attr-defined]
strict_cupy.get_array_module = _get_array_module  # type: ignore[attr-defined]
strict_cupy.fuse = _fuse  # type: ignore[attr-defined]
strict_cupy.cuda = _cuda  # type: ignore[attr-defined]
strict_cupy.random = _StrictNamespace("strict_cupy.random", np.random)  # type: ignore[attr-defined]
strict_cupy.random.default_rng = _default_rng  # type: ignore[attr-defined]
strict_cupy.random.Generator = _Generator  # type: ignore[attr-defined]
strict_cupy.linalg = _StrictNamespace("strict_cupy.linalg", np.linalg)  # type: ignore[attr-defined]
strict_cupy.fft = _StrictNamespace("strict_cupy.fft", np.fft)  # type: ignore[attr-defined]
strict_cupy.lib = _StrictNamespace("strict_cupy.lib", np.lib)  # type: ignore[attr-defined]
# cupyx.scipy.special's stand-in, found by backend.special.special_module
strict_cupy._scipy_special = _StrictNamespace("cupyx.scipy.special", scipy.special)  # type: ignore[attr-defined]


class _FakeCudnn:
    """``cupyx.cudnn``'s three convolution calls, computed by autogradcli's CPU convolution (the
    reference path) on the wrapped arrays and written into the output array, as cuDNN writes.
    ``calls`` counts them, so tests can tell the device path took cuDNN."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @staticmethod
    def _conv(x: np.ndarray, w: np.ndarray, pad: Any, stride: Any, dil: Any, groups: int) -> Any:
        import autogradcli as ag

        with ag.enable_grad():  # called from inside a backward pass, where grad mode is off
            xt = ag.tensor(x, requires_grad=True)
            wt = ag.tensor(w, requires_grad=True)
            out = ag.nn.functional.conv2d(xt, wt, None, stride, pad, dil, groups)
        return xt, wt, out

    def _grads(self, x: Any, w: np.ndarray, gy: Any, args: tuple) -> tuple[np.ndarray, ...]:
        xt, wt, out = self._conv(x, w, *args)
        import autogradcli as ag

        gx, gw = ag.autograd.grad(out, [xt, wt], ag.tensor(_unwrap(gy)))
        return gx.numpy(), gw.numpy()

    def convolution_forward(self, x, w, b, y, pad, stride, dil, groups, **kw):
        self.calls.append("forward")
        out = self._conv(_unwrap(x), _unwrap(w), pad, stride, dil, groups)[2].detach().numpy()
        if b is not None:
            out = out + _unwrap(b).reshape(1, -1, 1, 1)
        y._a[...] = out

    def convolution_backward_data(self, w, gy, b, gx, pad, stride, dil, groups, **kw):
        self.calls.append("backward_data")
        x = np.zeros(gx.shape, gx.dtype)
        gx._a[...] = self._grads(x, _unwrap(w), gy, (pad, stride, dil, groups))[0]

    def convolution_backward_filter(self, x, gy, gw, pad, stride, dil, groups, **kw):
        self.calls.append("backward_filter")
        w = np.zeros(gw.shape, gw.dtype)
        gw._a[...] = self._grads(_unwrap(x), w, gy, (pad, stride, dil, groups))[1]


strict_cupy._cudnn = None  # type: ignore[attr-defined]  # no cuDNN unless fake_cudnn() is on


@contextlib.contextmanager
def fake_cudnn() -> Iterator[_FakeCudnn]:
    """The stand-in with cuDNN (``_FakeCudnn``) for the block; without it the device path is
    the im2col one, which the other tests keep covering."""
    fake = _FakeCudnn()
    strict_cupy._cudnn = fake  # type: ignore[attr-defined]
    try:
        yield fake
    finally:
        strict_cupy._cudnn = None  # type: ignore[attr-defined]


strict_cupy.lib.stride_tricks = _StrictNamespace(  # type: ignore[attr-defined]
    "strict_cupy.lib.stride_tricks", np.lib.stride_tricks
)


@contextlib.contextmanager
def strict_cuda() -> Iterator[Any]:
    """Install ``strict_cupy`` as autogradcli's CUDA module for the block, then restore."""
    from autogradcli.backend import registry

    prev = registry._cuda
    if prev is strict_cupy:
        yield strict_cupy
        return
    prev_types = [
        t for t, m in registry._MODULE_OF_TYPE.items() if m is prev and t is not np.ndarray
    ]
    registry.use_cuda_module(strict_cupy, StrictArray)
    try:
        yield strict_cupy
    finally:
        registry.use_cuda_module(prev, prev_types[0] if prev_types else None)


def real_cuda_requested() -> bool:
    """Whether ``AGRAD_REAL_CUDA=1`` asks the oracles' device pass to run on a real GPU (cupy
    installed and a device present); otherwise it runs on the stand-in."""
    import os

    if os.environ.get("AGRAD_REAL_CUDA", "") not in ("1", "true", "yes"):
        return False
    from autogradcli.backend import registry

    try:
        xp = registry.cuda_module()  # imports real cupy when it is there and a GPU answers
    except RuntimeError:
        return False
    return getattr(xp, "__name__", "") == "cupy"


@contextlib.contextmanager
def device_pass() -> Iterator[Any]:
    """The oracles' ``device='cuda'`` pass: the real GPU when ``real_cuda_requested()``, else the
    strict stand-in."""
    if real_cuda_requested():
        from autogradcli.backend import registry

        yield registry._cuda
        return
    with strict_cuda() as xp:
        yield xp


__all__ = [
    "IMPLICIT_MSG",
    "StrictArray",
    "device_pass",
    "fake_cudnn",
    "real_cuda_requested",
    "strict_cuda",
    "strict_cupy",
]
