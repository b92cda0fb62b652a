"""The ``image_folder`` settings a config gives (``size``, ``channels``, ``normalize``,
``augment``), checked once, each problem named by its setting."""

from __future__ import annotations

import difflib
import inspect
from typing import Any

from ..kinds.base import DataError, Problem
from ..transforms import AUGMENTATIONS

__all__ = ["check_channels", "check_normalize", "check_size", "parse_augment"]


def _refuse(setting: str, why: str) -> DataError:
    return DataError([Problem(setting, why)])


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_size(size: Any) -> tuple[int, int] | None:
    """``size``: None (the training images' own size), an int (square) or ``[h, w]``."""
    if size is None:
        return None
    pair = [size, size] if _is_int(size) else size
    if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(map(_is_int, pair)):
        raise _refuse("size", f"expected an int or [height, width], got {size!r}")
    if min(pair) < 1 or max(pair) > 4096:
        raise _refuse("size", f"each side must be between 1 and 4096 pixels, got {size!r}")
    return int(pair[0]), int(pair[1])


def check_channels(channels: Any) -> int | None:
    """``channels``: 1 (grayscale), 3 (RGB) or None (1 if every training image is gray)."""
    if channels is not None and (not _is_int(channels) or channels not in (1, 3)):
        raise _refuse("channels", f"must be 1 or 3, got {channels!r}")
    return channels


def check_normalize(normalize: Any) -> Any:
    """``normalize``: None, ``auto`` (fitted on the training images) or ``{mean, std}``."""
    if normalize is None or normalize == "auto":
        return normalize
    if not isinstance(normalize, dict) or set(normalize) != {"mean", "std"}:
        raise _refuse(
            "normalize", f"expected auto or {{mean: [...], std: [...]}}, got {normalize!r}"
        )
    for key in ("mean", "std"):
        v = normalize[key]
        values = v if isinstance(v, (list, tuple)) else [v]
        if not values or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in values
        ):
            raise _refuse(f"normalize.{key}", f"expected a number per channel, got {v!r}")
        if key == "std" and any(x <= 0 for x in values):
            raise _refuse("normalize.std", f"every std must be > 0, got {v!r}")
        normalize = {**normalize, key: [float(x) for x in values]}
    if len(normalize["mean"]) != len(normalize["std"]):
        raise _refuse("normalize", "mean and std must have the same number of values")
    return normalize


def parse_augment(augment: Any) -> list[tuple[str, dict[str, Any]]]:
    """``augment``: a list of torchvision-named augmentations, each a name or
    ``{type: Name, ...arguments}``; every problem reported at once."""
    if augment is None:
        return []
    if not isinstance(augment, list):
        raise _refuse("augment", f"expected a list such as [RandomHorizontalFlip], got {augment!r}")
    problems, out = [], []
    for i, item in enumerate(augment):
        where = f"augment[{i}]"
        spec = {"type": item} if isinstance(item, str) else item
        if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
            problems.append(Problem(where, f"expected a name or {{type: Name, ...}}, got {item!r}"))
            continue
        name, args = spec["type"], {k: v for k, v in spec.items() if k != "type"}
        cls = AUGMENTATIONS.get(name)
        if cls is None:
            close = difflib.get_close_matches(name, AUGMENTATIONS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(
                Problem(
                    where,
                    f"unknown augmentation {name!r}{hint} (known: {', '.join(AUGMENTATIONS)})",
                )
            )
            continue
        params = inspect.signature(cls).parameters
        unknown = [k for k in args if k not in params]
        if unknown:
            problems.append(
                Problem(
                    where, f"{name} has no argument {unknown[0]!r} (it takes {', '.join(params)})"
                )
            )
            continue
        try:
            cls(**args)
        except (TypeError, ValueError) as err:
            problems.append(Problem(where, f"{name}: {err}"))
            continue
        out.append((name, args))
    if problems:
        raise DataError(problems)
    return out
