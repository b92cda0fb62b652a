"""``RRef``: a reference to a value owned by one worker. The owner keeps the value under the
RRef's id; any worker may fetch it (``to_here``) or run its methods where it lives (the
``rpc_sync()``/``rpc_async()``/``remote()`` proxies). Values are kept until shutdown."""

from __future__ import annotations

from typing import Any

from ...futures import Future
from . import api
from .functions import async_execution
from .options import WorkerInfo


class RRef:
    """``RRef(value)`` on the worker that owns ``value``; received RRefs refer to the owner's."""

    def __init__(self, value: Any, type_hint: Any = None) -> None:
        agent = api.current_agent()
        self._owner = agent.info
        self._id = agent.new_rref_id()
        agent.owned(self._id).set_result(value)

    @classmethod
    def _existing(cls, owner: WorkerInfo, rref_id: Any) -> RRef:
        out = cls.__new__(cls)
        out._owner, out._id = owner, rref_id
        return out

    def __reduce__(self) -> Any:
        return _rebuild_rref, (self._owner, self._id)

    def owner(self) -> WorkerInfo:
        """The WorkerInfo of the owner."""
        return self._owner

    def owner_name(self) -> str:
        """The owner's worker name."""
        return self._owner.name

    def is_owner(self) -> bool:
        """Whether this worker owns the value."""
        return api.current_agent().info.id == self._owner.id

    def confirmed_by_owner(self) -> bool:
        """Always True: the owner knows every RRef from the moment it is made."""
        return True

    def local_value(self) -> Any:
        """The value, on its owner (RuntimeError elsewhere)."""
        agent = api.current_agent()
        if agent.info.id != self._owner.id:
            raise RuntimeError(
                f"Cannot call localValue() on a non-local reference. Call it on {self._owner.name}"
            )
        return agent.owned(self._id).wait()

    def to_here(self, timeout: float = -1.0) -> Any:
        """The value, copied from its owner (the value itself on the owner)."""
        if self.is_owner():
            return self.local_value()
        return api.rpc_sync(self._owner, _fetch, args=(self._id,), timeout=timeout)

    def rpc_sync(self, timeout: float = -1.0) -> Any:
        """A proxy: ``rref.rpc_sync().method(*args)`` runs ``method`` on the owner's value."""
        return _Proxy(self, api.rpc_sync, timeout)

    def rpc_async(self, timeout: float = -1.0) -> Any:
        """As ``rpc_sync()``, each call returning a Future."""
        return _Proxy(self, api.rpc_async, timeout)

    def remote(self, timeout: float = -1.0) -> Any:
        """As ``rpc_sync()``, each call returning an RRef to the result (kept on the owner)."""
        return _Proxy(self, api.remote, timeout)

    def __repr__(self) -> str:
        kind = "OwnerRRef" if self.is_owner() else "UserRRef"
        return f"{kind}(RRefId = {self._id}, owner = {self._owner!r})"


def _rebuild_rref(owner: WorkerInfo, rref_id: Any) -> RRef:
    return RRef._existing(owner, rref_id)


@async_execution
def _fetch(rref_id: Any) -> Future:
    return api.current_agent().owned(rref_id)


def _call_on_value(rref: RRef, name: str, args: tuple, kwargs: dict) -> Any:
    return getattr(rref.local_value(), name)(*args, **kwargs)


class _Proxy:
    def __init__(self, rref: RRef, how: Any, timeout: float) -> None:
        self._rref, self._how, self._timeout = rref, how, timeout

    def __getattr__(self, name: str) -> Any:
        rref, how, timeout = self._rref, self._how, self._timeout

        def method(*args: Any, **kwargs: Any) -> Any:
            return how(
                rref.owner(), _call_on_value, args=(rref, name, args, kwargs), timeout=timeout
            )

        return method
