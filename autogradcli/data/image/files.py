"""Finding image files: the class folders of a root (``root/<class>/<file>``, as
torchvision's ``ImageFolder``), or every image under a path or glob for ``agrad predict``.
Hidden files and folders (a leading ``.``) and files without an image extension are skipped."""

from __future__ import annotations

import glob
import os

__all__ = ["EXTENSIONS", "class_folders", "files_under", "is_image_name", "matching"]

EXTENSIONS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")  # compared case-insensitively


def is_image_name(name: str) -> bool:
    """A visible file name with one of ``EXTENSIONS``."""
    return not name.startswith(".") and name.lower().endswith(EXTENSIONS)


def files_under(folder: str) -> list[str]:
    """Every image file under ``folder`` (recursively, following links), in torchvision's
    order: folders sorted by path, a folder's files sorted by name; hidden folders skipped."""
    walked = []
    for here, dirs, names in os.walk(folder, followlinks=True):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        walked.append((here, sorted(n for n in names if is_image_name(n))))
    return [os.path.join(here, n) for here, names in sorted(walked) for n in names]


def class_folders(root: str) -> list[str]:
    """The visible sub-folders of ``root``, sorted: the class names, index = sorted order."""
    return sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))


def matching(pattern: str) -> list[str]:
    """The image files a glob pattern names (``**`` recurses), sorted."""
    hits = glob.glob(pattern, recursive=True)
    files = []
    for hit in sorted(hits):
        if os.path.isdir(hit):
            files.extend(files_under(hit))
        elif is_image_name(os.path.basename(hit)):
            files.append(hit)
    return sorted(set(files))
