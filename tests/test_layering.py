"""The package's layers, read from every module's imports: a lower layer never imports an upper.

_utils < backend < tensor, autograd < ops < nn, optim, data, serialization, distributed, utils
< config, trainer < cli. Imports inside functions and ``TYPE_CHECKING`` blocks count too.
"""

from __future__ import annotations

import ast
import os

import autogradcli

PACKAGE_DIR = os.path.dirname(os.path.abspath(autogradcli.__file__))
LAYERS = {
    "_version": 0,
    "_startup": 0,  # stdlib only: quiet Ctrl-C while the agrad process imports
    "_utils": 0,  # internal helpers: atomic writes, hook handles
    "_constants": 0,  # torch.inf, pi, memory formats
    "version": 0,  # torch.version
    "deterministic": 0,  # torch.use_deterministic_algorithms' flags
    "random": 2,  # torch.random over tensor.random
    "jit": 4,  # torch.jit without TorchScript; save/load over serialization
    "compiler": 0,  # torch.compile returning its argument: stdlib only
    "_dynamo": 0,  # torch._dynamo's reset and config over compiler
    "backend": 1,
    "tensor": 2,
    "autograd": 2,
    "cuda": 2,  # torch.cuda: device queries, and the legacy cuda tensor types
    "accelerator": 1,  # torch.accelerator's queries over the backend
    "backends": 1,  # torch.backends.cudnn: flags kept for programs that set them
    "futures": 0,  # torch.futures: a thread-safe Future, stdlib only
    "amp": 1,  # autocast/GradScaler: deliberate no-ops on the CPU
    "testing": 3,  # assert_close over tensors
    "ops": 3,
    "linalg": 3,
    "special": 3,  # torch.special: names over the ops
    "fft": 3,  # torch.fft: Fourier transforms over the ops
    "sparse": 3,  # torch.sparse: products with sparse COO tensors over the ops  # torch.linalg: norms over the ops
    "nn": 4,
    "distributions": 4,  # torch.distributions: sampling and log-densities over the ops
    "optim": 4,
    "data": 4,
    "serialization": 4,
    "hub": 4,  # torch.hub's load_state_dict_from_url over serialization.load, no network
    "distributed": 4,
    "multiprocessing": 4,  # torch.multiprocessing: shared-memory tensors across processes
    "onnx": 4,  # torch.onnx's export: traces the ops, converters per op family
    "utils": 4,  # PyTorch's public torch.utils namespace (utils.data over autogradcli.data)
    "fx": 5,  # torch.fx: symbolic tracing into graphs over nn
    "config": 5,
    "trainer": 5,
    "sweep": 5,  # agrad sweep: search spaces and trials on Optuna, over config and trainer
    "cli": 6,
}


def _modules() -> list[tuple[str, str]]:
    """(dotted module name, file path) of every module under autogradcli/."""
    found = []
    for folder, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                found.append((".".join(rel), path))
    return sorted(found)


def _imported(module: str, path: str) -> list[tuple[str, int]]:
    """Every autogradcli module ``module`` imports, absolute, with the line."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None:  # from .. import x: each name may be a module
                out += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
            else:
                out.append((target, node.lineno))
    return [(name, line) for name, line in out if name.split(".")[0] == "autogradcli"]


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package itself (its __init__ gathers every layer's public names)
    return LAYERS.get(parts[1])


def test_every_subpackage_has_a_layer():
    names = {name for name, _ in _modules() if name.count(".") >= 1}
    unknown = sorted({name.split(".")[1] for name in names} - set(LAYERS))
    assert not unknown, f"add these to LAYERS in tests/test_layering.py: {unknown}"


def test_lower_layers_never_import_upper_layers():
    violations = []
    for module, path in _modules():
        own = _layer(module)
        if own is None:
            continue
        for target, line in _imported(module, path):
            theirs = _layer(target)
            if target == "autogradcli" or (theirs is not None and theirs > own):
                rel = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))
                violations.append(f"{rel}:{line} imports {target}")
    assert not violations, "\n".join(violations)


def test_the_checker_sees_upward_imports(tmp_path):
    """The reader resolves relative imports: an ops-level upward import is reported."""
    path = tmp_path / "shape.py"
    path.write_text("from ..nn import functional\nfrom .. import trainer\nimport autogradcli.cli\n")
    found = [t for t, _ in _imported("autogradcli.ops.shape", str(path))]
    assert found == ["autogradcli.nn", "autogradcli.trainer", "autogradcli.cli"]
    assert all(_layer(t) > _layer("autogradcli.ops.shape") for t in found)
