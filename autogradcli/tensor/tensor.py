"""The Tensor: an array from the backend plus the autograd bookkeeping that links it to the graph.

Only state and graph-independent queries live here; the differentiable operations are Functions in
``autogradcli.ops``, bound to Tensor as methods there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend
from .._utils.hooks import RemovableHandle, add_hook
from ..autograd import grad_mode
from . import dtype as dtypes
from .printing import format_tensor


class Size(tuple):
    """A tensor's shape: a tuple with PyTorch's repr and ``numel()``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"autogradcli.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


_new = object.__new__
_ndarray = np.ndarray
_generic = np.generic
_asarray = np.asarray


class Tensor:
    """An n-dimensional array that records the operations applied to it for automatic differentiation."""

    __slots__ = (
        "__weakref__",
        "_acc",  # the AccumulateGrad node of a leaf that requires grad, made on first use
        "_base",  # the tensor this one is a view of, or None
        "_data",  # the backend array (numpy.ndarray or cupy.ndarray)
        "_grad",
        "_grad_fn",  # the backward node that produced this tensor, None for leaves
        "_hooks",  # gradient hooks of a leaf, {id: hook}
        "_output_nr",  # which output of _grad_fn this tensor is
        "_requires_grad",
        "_vc",  # version counter [n], shared with views; None until first needed
    )

    # numpy must defer to our reflected operators (np.float32(2) * t) instead of converting t.
    __array_priority__ = 1000
    __array_ufunc__ = None

    def __init__(
        self,
        *args: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> None:
        """PyTorch's legacy constructor: ``Tensor(3, 4)`` (sizes, uninitialised), ``Tensor([..])``
        (data, in the default float dtype), ``Tensor(other)`` (an alias), ``Tensor()`` (empty)."""
        from .legacy_types import legacy_array

        self._data = legacy_array(args, dtype, device, strict=False)
        self._grad = self._grad_fn = self._base = self._hooks = self._acc = self._vc = None
        self._output_nr = 0
        self._requires_grad = False
        if requires_grad:
            self.requires_grad = True

    # ----------------------------------------------------------------- autograd state
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Any:
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: the tensor has shape "
                    f"{tuple(self._data.shape)} but the grad has shape {tuple(value._data.shape)}"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: {value.dtype} for a {self.dtype} tensor"
                )
            if value.device != self.device:
                raise RuntimeError(
                    f"assigned grad has data located on a different device: {value.device} "
                    f"for a tensor on {self.device}"
                )
        self._grad = value

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        return self._vc[0] if self._vc is not None else 0

    def _bump_version(self) -> None:
        if self._vc is None:
            self._vc = [1]
        else:
            self._vc[0] += 1

    def _shared_version_counter(self) -> list[int]:
        if self._vc is None:
            self._vc = [0]
        return self._vc

    def retain_grad(self) -> None:
        """Keep ``.grad`` on a non-leaf tensor after backward (a no-op on leaves)."""
        if self._grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        self._grad_fn._retain_grad_of(self)

    @property
    def retains_grad(self) -> bool:
        return self._grad_fn is not None and self._grad_fn._retains(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when the gradient of this tensor is computed; a returned tensor replaces it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, hook)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into ``.grad`` of every leaf that requires grad."""
        from ..autograd.engine import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing this one's data (and version counter) but cut from the graph."""
        out = wrap(self._data)
        out._vc = self._shared_version_counter()
        return out

    def detach_(self) -> Tensor:
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    # ----------------------------------------------------------------- data access
    @property
    def data(self) -> Tensor:
        out = wrap(self._data)
        out._vc = self._shared_version_counter()
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> backend.Device:
        return backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_xpu(self) -> bool:
        """False: autogradcli has no Intel XPU backend (programs test it beside ``is_cuda``)."""
        return False

    @property
    def is_mps(self) -> bool:
        """False: autogradcli has no Apple MPS backend."""
        return False

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind in "fV"

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim: int | None = None) -> Any:
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    def data_ptr(self) -> int:
        if backend.is_cpu_array(self._data):
            return int(self._data.__array_interface__["data"][0])
        return int(self._data.data.ptr)

    def share_memory_(self) -> Tensor:
        """Move the data to memory other processes map (in place; a no-op if already there)."""
        from .sharing import share_memory_

        return share_memory_(self)

    def is_shared(self) -> bool:
        from .sharing import is_shared

        return is_shared(self)

    def item(self) -> Any:
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a numpy array sharing memory (CPU tensors that don't require grad)."""
        if self._data.dtype.kind == "V":
            raise TypeError("Got unsupported ScalarType BFloat16")
        if force:
            return backend.to_numpy(self._data)
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if not backend.is_cpu_array(self._data):
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first."
            )
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = backend.to_numpy(self._data)
        return arr if dtype is None else arr.astype(dtype, copy=False)

    # ----------------------------------------------------------------- Python protocol
    __hash__ = object.__hash__

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.item())

    def __repr__(self) -> str:
        return format_tensor(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return repr(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(
            "autogradcli tensors are not pickled; use autogradcli.save(obj, path), which "
            "never runs code on load"
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A leaf copy (data, requires_grad and grad), as ``copy.deepcopy`` of a model needs."""
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment."
            )
        if id(self) in memo:
            return memo[id(self)]
        out = wrap(self._data.copy(), self._requires_grad)
        if self._grad is not None:
            out._grad = wrap(self._grad._data.copy())
        memo[id(self)] = out
        return out


def wrap(arr: Any, requires_grad: bool = False, grad_fn: Any = None) -> Tensor:
    """A Tensor around a backend array, without copying or checking: the one place a Tensor's
    slots are filled (numpy turns 0-d results into scalars: they become 0-d arrays again).
    ``grad_fn``: the node this tensor is output 0 of (autograd's recorded outputs)."""
    if type(arr) is not _ndarray and isinstance(arr, _generic):
        arr = _asarray(arr)
    t = _new(Tensor)
    t._data = arr
    t._requires_grad = requires_grad
    t._grad_fn = grad_fn
    t._grad = t._base = t._hooks = t._acc = t._vc = None
    t._output_nr = 0
    return t


def wrap_view(arr: Any, base: Tensor) -> Tensor:
    """A Tensor around ``arr``, a view of ``base``'s array: it shares base's version counter,
    and its ``_base`` is the tensor that owns the memory."""
    t = wrap(arr)
    t._vc = base._shared_version_counter()
    t._base = base._base if base._base is not None else base
    return t


def _wrap_dim(dim: int, ndim: int) -> int:
    """Python-style negative dims, with PyTorch's IndexError when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def is_grad_enabled() -> bool:
    return grad_mode.STATE.enabled
