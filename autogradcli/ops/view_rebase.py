"""An in-place op on a view of a tensor with history: the base's history is rewritten, as PyTorch's
``CopySlices`` does (``x.reshape(-1, n)[~mask] = value`` in d2l's ``masked_softmax``).

The view's elements are located in its base by memory address (views share the base's memory),
so any chain of views (reshape, slicing, transpose, ``view``...) is handled the same way: the base
becomes ``index_put(base_before, where, new_view_value)`` and the view becomes ``base[where]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor.storage import _address
from ..tensor.tensor import Tensor, wrap
from ._util import array_module
from .indexing import GetItem, _CopySlices


def view_key(view: Any, base: Any) -> tuple[Any, ...]:
    """The advanced index into ``base`` of each element of ``view`` (an array viewing its memory)."""
    xp = array_module(base)
    item = base.itemsize

    def positions(arr: Any, first: int) -> Any:  # each element's offset in memory, in items
        pos = xp.full(arr.shape, first, dtype=xp.int64)
        for axis, (n, stride) in enumerate(zip(arr.shape, arr.strides)):
            shape = [1] * arr.ndim
            shape[axis] = n
            pos = pos + (xp.arange(n, dtype=xp.int64) * (stride // item)).reshape(shape)
        return pos

    base_pos = positions(base, 0)
    view_pos = positions(view, (_address(view) - _address(base)) // item)
    low = int(base_pos.min()) if base.size else 0
    flat = xp.full(int(base_pos.max()) - low + 1 if base.size else 1, -1, dtype=xp.int64)
    flat[(base_pos - low).ravel()] = xp.arange(base.size, dtype=xp.int64)
    return tuple(xp.unravel_index(flat[view_pos - low], base.shape))


def record_on_view(self: Tensor, op: Callable[[Tensor], Tensor], write: Callable) -> Tensor:
    """``self = op(self)`` for a view ``self``, with its base taking the change into its history."""
    base = self._base
    key = view_key(self._data, base._data)
    snapshot = wrap(self._data.copy(), self._requires_grad)
    snapshot._grad_fn, snapshot._output_nr = self._grad_fn, self._output_nr
    result = op(snapshot)
    before = wrap(base._data.copy(), base._requires_grad)
    before._grad_fn, before._output_nr = base._grad_fn, base._output_nr
    after = _CopySlices.apply(before, key, result, False)
    write(result._data)  # into the memory self shares with base
    base._grad_fn, base._output_nr = after._grad_fn, after._output_nr
    base._requires_grad = after._requires_grad
    if base._requires_grad:
        view = GetItem.apply(base, key, False)
        self._grad_fn, self._output_nr = view._grad_fn, view._output_nr
        self._requires_grad = True
    self._bump_version()
    return self
