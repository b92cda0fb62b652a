"""``torch.jit`` as PyTorch behaves where nothing is compiled: the decorators return what they
decorate, ``is_scripting()``/``is_tracing()`` are False, and ``script``/``trace`` return the
module or function unchanged, with a one-time warning that no TorchScript is produced.
``save``/``load`` (jit/archive.py) write and read modules as ``autogradcli.save`` does."""

# no ``from __future__ import annotations``: it would bind the name ``annotations`` over the
# submodule torch.jit.annotations
import contextlib
import typing
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from . import annotations

__all__ = [
    "Attribute",
    "Error",
    "Final",
    "ScriptFunction",
    "ScriptModule",
    "ScriptWarning",
    "TracerWarning",
    "annotate",
    "annotations",
    "export",
    "fork",
    "freeze",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "optimized_execution",
    "save",
    "script",
    "script_if_tracing",
    "trace",
    "unused",
    "wait",
]

F = TypeVar("F")
Final = typing.Final  # as torch.jit.Final: ``c: Final[int] = 3`` is a plain class attribute


class ScriptWarning(Warning):
    """PyTorch's class for TorchScript warnings."""


class TracerWarning(Warning):
    """PyTorch's class for warnings raised while tracing."""


class Error(RuntimeError):
    """PyTorch's TorchScript error class (never raised here: nothing is compiled)."""


class ScriptModule:
    """The name PyTorch gives compiled modules; nothing here is one (``isinstance`` is False)."""


class ScriptFunction:
    """The name PyTorch gives compiled functions; nothing here is one."""


_noted = False


def _note(what: str) -> None:
    global _noted
    if not _noted:
        _noted = True
        warnings.warn(
            f"jit.{what}: autogradcli produces no TorchScript; the module or function is "
            "returned unchanged and runs as Python (this note is shown once)",
            UserWarning,
            stacklevel=3,
        )


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@ignore`` / ``@ignore(drop=...)``: the function, unchanged (it always runs as Python)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: F) -> F:
    """``@unused``: the function (or property), unchanged."""
    return fn


def export(fn: F) -> F:
    """``@export``: the method, unchanged."""
    return fn


def interface(obj: F) -> F:
    """``@interface``: the class, unchanged."""
    return obj


def script_if_tracing(fn: F) -> F:
    """``@script_if_tracing``: the function, unchanged (nothing is traced)."""
    return fn


def is_scripting() -> bool:
    """False: code never runs under TorchScript here."""
    return False


def is_tracing() -> bool:
    """False: code is never traced here."""
    return False


def script(
    obj: F, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None, example_inputs: Any = None
) -> F:
    """``obj`` itself (a module, function or class), with a one-time warning: no TorchScript."""
    _note("script")
    return obj


def trace(func: F, example_inputs: Any = None, *args: Any, **kwargs: Any) -> F:
    """``func`` itself (a module or function), with a one-time warning: no TorchScript."""
    _note("trace")
    return func


def freeze(mod: F, preserved_attrs: Any = None, optimize_numerics: bool = True) -> F:
    """The module, unchanged (there is no TorchScript module to freeze)."""
    return mod


def optimize_for_inference(mod: F, other_methods: Any = None) -> F:
    """The module, unchanged."""
    return mod


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """A context manager that changes nothing."""
    yield


def annotate(the_type: Any, the_value: F) -> F:
    """``the_value``: the type is for the TorchScript compiler only."""
    return the_value


def Attribute(value: F, type: Any) -> F:
    """``value``: the type is for the TorchScript compiler only."""
    return value


class Future:
    """The result of ``fork``: the call has already run; ``wait()`` returns its value."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        """The call's result."""
        return self._value

    def value(self) -> Any:
        """The call's result."""
        return self._value

    def done(self) -> bool:
        """True: the call ran when it was forked."""
        return True


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Run ``func(*args, **kwargs)`` now (PyTorch runs it now too outside TorchScript)."""
    _deprecated("fork")
    return Future(func(*args, **kwargs))


def wait(future: Future) -> Any:
    """The forked call's result."""
    _deprecated("wait")
    return future.wait()


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`torch.jit.{name}` is deprecated. Please use `torch.compile` instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def __getattr__(name: str) -> Any:
    """``save`` and ``load`` are read from jit/archive.py on first use (they need serialization)."""
    if name in ("save", "load"):
        from . import archive

        return getattr(archive, name)
    raise AttributeError(f"module 'autogradcli.jit' has no attribute {name!r}")
