"""``torch.hub`` without the network: ``load_state_dict_from_url`` reads a ``file://`` URL, or the
file already in ``get_dir()/checkpoints`` (``$TORCH_HOME/hub/checkpoints``), through
``autogradcli.load``; anything that would need a download raises an error saying where to put
the file."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from typing import Any
from urllib.parse import unquote, urlparse

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_hub_dir: list[str] = []


def _get_torch_home() -> str:
    """``$TORCH_HOME``, else ``$XDG_CACHE_HOME/torch`` (default ``~/.cache/torch``)."""
    cache = os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch")))


def get_dir() -> str:
    """Where hub files live: ``set_dir``'s, else ``_get_torch_home()/hub``, as PyTorch
    resolves it."""
    if _hub_dir:
        return _hub_dir[0]
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike[str]) -> None:
    """Use ``d`` as the hub folder."""
    _hub_dir[:] = [os.path.expanduser(os.fspath(d))]


def _local_path(url: str) -> str | None:
    parts = urlparse(url)
    if parts.scheme == "file":
        return unquote(parts.path)
    if parts.scheme == "" and url:
        return url
    return None


def _no_network(url: str, where: str) -> RuntimeError:
    return RuntimeError(
        f"cannot download {url}: autogradcli does not use the network. Download the file "
        f"yourself and put it at {where} (or pass a file:// URL)"
    )


def _check_hash(path: str, prefix: str) -> None:
    """PyTorch's check: the file's SHA-256 starts with ``prefix``."""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest[: len(prefix)] != prefix:
        raise RuntimeError(f'invalid hash value (expected "{prefix}", got "{digest}")')


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = False,
) -> dict[str, Any]:
    """The object saved at ``url``: a ``file://`` path, or ``model_dir/<file name>`` (default
    ``get_dir()/checkpoints``) when it is already there; never downloads."""
    from .serialization import load

    local = _local_path(url)
    filename = file_name or os.path.basename(urlparse(url).path)
    if local is None:
        folder = model_dir or os.path.join(get_dir(), "checkpoints")
        local = os.path.join(folder, filename)
        if not os.path.exists(local):
            raise _no_network(url, local)
    elif not os.path.exists(local):
        raise FileNotFoundError(f"no such file: {local} (from {url})")
    found = HASH_REGEX.search(filename) if check_hash else None
    if found:
        _check_hash(local, found.group(1))
    return load(local, map_location=map_location, weights_only=weights_only)


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Copy a ``file://`` URL to ``dst``; any other URL raises (no network here)."""
    local = _local_path(url)
    if local is None:
        raise _no_network(url, dst)
    if hash_prefix is not None:
        _check_hash(local, hash_prefix)
    shutil.copyfile(local, dst)


_download_url_to_file = download_url_to_file  # the old private name some programs import


def _hub_code(repo_or_dir: str) -> RuntimeError:
    return RuntimeError(
        f"torch.hub cannot fetch {repo_or_dir}: autogradcli runs no code from GitHub; build the "
        "model in your own code and load its weights with load_state_dict_from_url"
    )


def load(repo_or_dir: str, model: str, *args: Any, **kwargs: Any) -> Any:
    """Raises: hub models are code downloaded from GitHub."""
    raise _hub_code(repo_or_dir)


def list(github: str, *args: Any, **kwargs: Any) -> Any:
    """Raises: hub listings are read from GitHub."""
    raise _hub_code(github)


def help(github: str, model: str, *args: Any, **kwargs: Any) -> Any:
    """Raises: hub docstrings are read from GitHub."""
    raise _hub_code(github)
