"""Lazy layers (``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyBatchNorm1d/2d/3d``): the input size is
read from the first forward's input, which materializes the parameters in place and turns the
module into its ordinary class (``Linear``, ``Conv2d``...), as PyTorch's lazy modules do."""

from __future__ import annotations

from typing import Any

from ..autograd.grad_mode import no_grad
from ..tensor.factory import tensor
from ..tensor.tensor import Tensor
from .conv import Conv1d, Conv2d, Conv3d
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyLinear",
]


class LazyModuleMixin:
    """Infers the uninitialized parameters from the first input (a forward pre-hook), then
    becomes ``cls_to_become``; a state_dict with real tensors materializes them too."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer still waits for its shape."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(t) for t in tensors)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize the parameters from the first forward's arguments."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, value in list(self._parameters.items()) + list(self._buffers.items()):
            if value is not None and (
                name in self._parameters or name not in self._non_persistent_buffers_set
            ):
                destination[prefix + name] = (
                    value if keep_vars or is_lazy(value) else value.detach()
                )

    def _load_from_state_dict(
        self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
        missing_keys: list, unexpected_keys: list, error_msgs: list,
    ) -> None:  # fmt: skip
        still_lazy = []
        for name, value in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if not is_lazy(value) or key not in state_dict:
                continue
            incoming = state_dict[key]
            if is_lazy(incoming):  # both uninitialized: nothing to copy
                still_lazy.append(key)
                continue
            with no_grad():
                value.materialize(incoming.shape, dtype=incoming.dtype)
        state_dict = {k: v for k, v in state_dict.items() if k not in still_lazy}
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        missing_keys[:] = [k for k in missing_keys if k not in still_lazy]


def _infer_parameters(module: Any, args: tuple) -> None:
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """:class:`Linear` whose ``in_features`` is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    """The lazy conv layers: ``in_channels`` is dim 1 of the first (batched) input."""

    _dims = 2

    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self.out_channels = out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        if not self.has_uninitialized_params():
            return
        unbatched = self._dims + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{self._get_name()}, but got input of size: {input.shape}"
            )
        with no_grad():
            self.in_channels = input.shape[1 if input.ndim == unbatched + 1 else 0]
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """:class:`Conv1d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv1d
    _dims = 1


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """:class:`Conv2d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv2d
    _dims = 2


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """:class:`Conv3d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv3d
    _dims = 3


class _LazyNormBase(LazyModuleMixin):
    """The lazy batch norms: ``num_features`` is dim 1 of the first input."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(0, eps, momentum, False, False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype="int64", device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        if not self.has_uninitialized_params():
            return
        with no_grad():
            self.num_features = input.shape[1]
            for value in (self.weight, self.bias, self.running_mean, self.running_var):
                if value is not None:
                    value.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """:class:`BatchNorm1d` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """:class:`BatchNorm2d` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """:class:`BatchNorm3d` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm3d
