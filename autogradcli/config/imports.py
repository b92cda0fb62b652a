"""Import paths in configs: ``package.module:Name`` or ``path/to/file.py:Name``.

A file path is relative to the config file's directory (or to the working directory for a value
given with ``--set``). Files are loaded once per absolute path, so a class resolved twice is the
same object. While a user module is imported, its directory is on ``sys.path``, so it may import
its neighbours.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

from .._utils.user_code import user_frame
from .errors import did_you_mean

_file_modules: dict[str, Any] = {}


class ImportPathError(Exception):
    """A bad import path; the message says what is wrong, for a ConfigIssue."""


def is_import_path(text: Any) -> bool:
    return isinstance(text, str) and ":" in text


def _syspath(directory: str) -> Any:
    class _Ctx:
        def __enter__(self) -> None:
            self.added = directory not in sys.path
            if self.added:
                sys.path.insert(0, directory)

        def __exit__(self, *exc: Any) -> None:
            if self.added and directory in sys.path:
                sys.path.remove(directory)

    return _Ctx()


def _load_file(file: str, base_dir: str) -> Any:
    full = os.path.abspath(os.path.join(base_dir, os.path.expanduser(file)))
    if full in _file_modules:
        return _file_modules[full]
    if not os.path.isfile(full):
        raise ImportPathError(f"file {file!r} not found (looked for {full})")
    stem = os.path.splitext(os.path.basename(full))[0]
    mod_name = f"_agrad_user_.{stem}_{abs(hash(full)):x}"
    spec = importlib.util.spec_from_file_location(mod_name, full)
    if spec is None or spec.loader is None:
        raise ImportPathError(f"cannot import {file!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        with _syspath(os.path.dirname(full)):
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as err:
        sys.modules.pop(mod_name, None)
        raise ImportPathError(f"importing {file!r} failed: {_explain(err)}") from None
    _file_modules[full] = module
    return module


def _load_module(name: str, base_dir: str) -> Any:
    try:
        with _syspath(os.path.abspath(base_dir)):
            return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name and (name == err.name or name.startswith(err.name + ".")):
            raise ImportPathError(f"module {name!r} not found") from err
        raise ImportPathError(f"importing {name!r} failed: {type(err).__name__}: {err}") from err
    except (Exception, SystemExit) as err:
        raise ImportPathError(f"importing {name!r} failed: {_explain(err)}") from None


def _explain(err: BaseException) -> str:
    """What went wrong while importing the user's module, with the user's file:line and line
    of code (the last traceback frame that is theirs)."""
    if isinstance(err, SystemExit):
        what = f"it called sys.exit({err.code!r}) while being imported"
    else:
        what = f"{type(err).__name__}: {err}"
    if isinstance(err, SyntaxError):
        return what  # its message names the file and line
    frame = user_frame(err)
    if frame is None:
        return what
    code = f": {frame.line.strip()}" if frame.line else ""
    return f"{what}\n    at {frame.filename}:{frame.lineno}{code}"


def resolve_import(text: str, base_dir: str) -> Any:
    """The object named by ``module:Name`` / ``file.py:Name``; ImportPathError if there is none.

    ``Name`` may be dotted (``file.py:Outer.Inner``).
    """
    where, sep, attr = text.rpartition(":")
    if not sep or not where or not attr:
        raise ImportPathError(
            f"bad import path {text!r}: expected 'package.module:Name' or 'path/to/file.py:Name'"
        )
    if where.endswith(".py") or "/" in where or os.sep in where:
        module = _load_file(where, base_dir)
    else:
        module = _load_module(where, base_dir)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            raise ImportPathError(
                f"{where!r} has no {part!r}{did_you_mean(part, names)}"
                if obj is module
                else f"{attr!r} has no {part!r}{did_you_mean(part, names)}"
            )
        obj = getattr(obj, part)
    return obj
