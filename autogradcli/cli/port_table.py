"""Whether autogradcli has a torch name, and the one-line notes ``agrad port`` prints: the one
table both ``agrad port`` and tools/api_usage (the README's coverage figures) read."""

from __future__ import annotations

import functools
import importlib
import os
import types
import warnings
from collections.abc import Iterator

__all__ = ["NOTES", "category", "iter_sources", "note", "present"]

# Names autogradcli has on purpose only as what PyTorch does without the feature, or lacks
# with an alternative: (reason, what to use instead).
NOTES: dict[str, tuple[str, str]] = {
    "torch.jit.script": ("returns its argument unchanged: no TorchScript is produced", ""),
    "torch.jit.trace": ("returns its argument unchanged: no TorchScript is produced", ""),
    "torch.jit.save": ("writes autogradcli's module file, not TorchScript", ""),
    "torch.jit.load": (
        "reads jit.save's files; refuses PyTorch's TorchScript archives",
        "model.load_state_dict(autogradcli.load(path))",
    ),
    "torch.compile": ("returns its argument unchanged: nothing is compiled", ""),
    "torch.nn.DataParallel": ("one device: runs the wrapped module as it is", ""),
    "torch.utils.checkpoint.checkpoint": ("the plain call: same results, no memory saved", ""),
    "torch.set_float32_matmul_precision": ("kept: float32 products are always full float32", ""),
    "torch.backends.cuda.matmul.allow_tf32": ("kept: float32 products never use TF32", ""),
    "torch.hub.load": ("would download code from GitHub", "build the model in your own code"),
    "torch.hub.load_state_dict_from_url": (
        "never downloads: reads file:// URLs and $TORCH_HOME/hub/checkpoints",
        "",
    ),
    "torch.profiler": ("no profiler", "cProfile, or time.perf_counter around steps"),
    "torch.autograd.profiler": ("no profiler", "cProfile, or time.perf_counter around steps"),
    "torch.fx": ("symbolic tracing and graph rewriting; not every fx pass", ""),
    "torch._dynamo": ("no compiler", ""),
    "torch.distributed.rpc": ("TCP between trusted workers; no ProcessGroup/Faulty backends", ""),
    "torch.distributed.launch": ("", "mpiexec -n N python prog.py"),
    "torch.cuda.amp": ("", "autogradcli.amp.autocast / autogradcli.amp.GradScaler"),
}


def _public() -> types.ModuleType:
    """The package's public namespace, which the names are looked up in (the cli is the top
    layer, so it may read all of it)."""
    return importlib.import_module("autogradcli")


def _resolve(dotted: str) -> object:
    """The autogradcli object for a ``torch.``-rooted dotted name; raises when absent."""
    obj: object = _public()
    parts = dotted.split(".")[1:]
    for part in parts:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            if not isinstance(obj, types.ModuleType):
                raise
            obj = importlib.import_module(f"{obj.__name__}.{part}")
    return obj


@functools.cache
def present(name: str) -> bool:
    """Whether autogradcli has ``name`` (``torch.nn.Linear``, ``Tensor.view``, ``Module.apply``)."""
    autogradcli = _public()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if name.startswith("Tensor."):
                return hasattr(autogradcli.Tensor, name[7:])
            if name.startswith("Module."):
                return hasattr(autogradcli.nn.Module, name[7:])
            if name == "torch":
                return True
            _resolve(name)
            return True
        except Exception:  # an import failing inside the package is "absent" too
            return False


def category(name: str) -> str:
    """The README table's row for a name: ``torch``, ``nn``, ``nn.functional``, ``Tensor``..."""
    if name.startswith(("Tensor.", "Module.")):
        return name.split(".")[0] + " methods"
    parts = name.split(".")
    if len(parts) <= 2:
        return "torch"
    if parts[1] == "nn" and parts[2] == "functional":
        return "nn.functional"
    if parts[1] == "utils" and parts[2] == "data":
        return "utils.data"
    return parts[1]


def note(name: str) -> tuple[str, str]:
    """(reason, instead) for a name: its own note, its module's, or 'not in autogradcli'."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        found = NOTES.get(".".join(parts[:i]))
        if found is not None:
            return found[0] or "not in autogradcli", found[1]
    return "not in autogradcli", ""


def iter_sources(path: str) -> Iterator[str]:
    """The .py and .ipynb files at ``path`` (a file, or a folder walked in sorted order;
    hidden folders and notebook checkpoints skipped)."""
    if not os.path.isdir(path):
        yield path
        return
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".ipynb")):
                yield os.path.join(folder, name)
