"""``dataset: image_folder``: images in ``root/<class>/<file>`` folders (PNG, JPEG, BMP, GIF),
class names from the folder names, sorted (index = sorted order, as torchvision's
``ImageFolder``). ``read`` lists files and reads their headers only; pixels are decoded one
sample at a time by the Dataset ``samples`` returns, in DataLoader workers when there are any,
the first time each is asked for, then kept as uint8 in a temporary file (``image/cache.py``)
so later epochs read them back instead of decoding; memory does not grow with the number of
images."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ..dataset import Dataset
from ..image.batch import transform_batch
from ..image.cache import DecodedImages
from ..image.decode import BadImage, Header, decode, probe, to_float
from ..image.files import EXTENSIONS, class_folders, files_under, is_image_name, matching
from ..image.settings import check_channels, check_normalize, check_size, parse_augment
from ..transforms import AUGMENTATIONS, Compose, Normalize
from .base import DataError, DataKind, Problem, Source

__all__ = ["ImageFolder", "ImageFolderDataset", "ImageSource"]

MAX_PROBLEMS = 20  # problems listed in one error; the rest are counted


class ImageSource(Source):
    """The image files found (path as the user named it, class folder name or None, header),
    and the files skipped as bad with ``skip_bad: true``."""

    def __init__(
        self,
        files: list[str],
        labels: list[str | None],
        headers: list[Header],
        classes: list[str],
        skipped: list[Problem],
        decoded: DecodedImages | None = None,
    ) -> None:
        self.files, self.labels, self.headers = files, labels, headers
        self.classes, self.skipped = classes, skipped
        self._decoded: dict[tuple[tuple[int, int], int], DecodedImages] = {}
        if decoded is not None:  # filled while the headers were read
            self._decoded[(tuple(decoded.size), decoded.channels)] = decoded

    def __len__(self) -> int:
        return len(self.files)

    def decoded(self, size: tuple[int, int], channels: int) -> DecodedImages:
        """Every file's pixels at ``size`` and ``channels``, decoded once each when first asked
        for (one store per size and channel count, shared by fit and every split's samples)."""
        key = (tuple(size), channels)
        if key not in self._decoded:
            self._decoded[key] = DecodedImages(self.files, (size[0], size[1]), channels)
        return self._decoded[key]


class ImageFolderDataset(Dataset):
    """``(image, class index)`` pairs (or images alone when ``targets`` is None), each decoded
    from its file when asked for (through ``store``, rows ``rows`` of it, when given: decoded
    once, read back after); a file that fails to decode is a ``DataError`` naming it."""

    def __init__(
        self,
        files: Sequence[str],
        targets: Sequence[int] | None,
        size: tuple[int, int],
        channels: int,
        transform: Any = None,
        store: DecodedImages | None = None,
        rows: Sequence[int] | None = None,
    ) -> None:
        self.files, self.targets = list(files), None if targets is None else list(targets)
        self.size, self.channels, self.transform = size, channels, transform
        self.store, self.rows = store, None if rows is None else list(rows)

    def __len__(self) -> int:
        return len(self.files)

    def _image(self, index: int) -> np.ndarray:
        path = self.files[index]
        try:
            if self.store is None or self.rows is None:
                return decode(path, self.size, self.channels)
            return to_float(self.store.pixels(self.rows[index]))
        except BadImage as err:
            raise DataError([Problem(path, str(err))]) from None

    def __getitems__(self, indices: Sequence[int]) -> list[Any]:
        """A batch's samples (the DataLoader's batched fetch): the transforms run once over the
        batch where they can (``image/batch.py``), with the same draws and values as one by one."""
        if self.transform is None or not indices:
            return [self[i] for i in indices]
        images = np.stack([self._image(i) for i in indices])
        out = transform_batch(self.transform, images)
        if out is None:
            return [self._sample(i, self.transform(img)) for i, img in zip(indices, images)]
        return [self._sample(i, img) for i, img in zip(indices, out)]

    def _sample(self, index: int, img: np.ndarray) -> Any:
        img = np.ascontiguousarray(img, dtype=np.float32)
        return img if self.targets is None else (img, self.targets[index])

    def __getitem__(self, index: int) -> Any:
        img = self._image(index)
        return self._sample(index, img if self.transform is None else self.transform(img))


def _limited(problems: list[Problem]) -> DataError:
    return DataError(problems[:MAX_PROBLEMS], max(0, len(problems) - MAX_PROBLEMS))


class ImageFolder(DataKind):
    """Settings: ``root`` (the folder of class folders); ``size`` (int or [h, w]; None keeps
    the training images' own size, which must then agree); ``channels`` (1, 3, or None: 1 when
    every training image is gray); ``normalize`` (None, ``auto`` = per-channel mean and std of
    the training images, or ``{mean, std}``); ``augment`` (training-only, torchvision's names:
    RandomCrop, RandomHorizontalFlip, RandomRotation, ColorJitter); ``skip_bad`` (decode every
    file once when reading and skip, and count, those that fail, instead of refusing them)."""

    name: ClassVar[str] = "image_folder"
    path_settings: ClassVar[tuple[str, ...]] = ("root",)

    def __init__(
        self,
        root: str | None = None,
        size: int | list[int] | None = None,
        channels: int | None = None,
        normalize: str | dict[str, list[float]] | None = None,
        augment: list[Any] | None = None,
        skip_bad: bool = False,
    ) -> None:
        self.root = None if root is None else os.fspath(root)
        self.size = check_size(size)
        self.channels = check_channels(channels)
        self.normalize = check_normalize(normalize)
        self.augment = parse_augment(augment)
        self.skip_bad = bool(skip_bad)

    # ------------------------------------------------------------------ reading
    def read(self, path: str | os.PathLike | None = None) -> ImageSource:
        """The configured root's class folders (``path`` None), else for eval/predict an image
        file, a folder (searched recursively; the first folder level under it names the
        class) or a glob."""
        if path is None:
            if self.root is None:
                raise DataError(
                    [Problem("root", "image_folder needs root: the folder of class folders")]
                )
            return self._read_root(self.root)
        return self._read_inputs(os.fspath(path))

    def _read_root(self, root: str) -> ImageSource:
        problems: list[Problem] = []
        try:
            classes = class_folders(root)
        except FileNotFoundError:
            raise DataError([Problem(root, "no such folder")]) from None
        except NotADirectoryError:
            raise DataError(
                [Problem(root, "is a file; root must be a folder of class folders")]
            ) from None
        except PermissionError:
            raise DataError([Problem(root, "cannot be read: permission denied")]) from None
        if not classes:
            why = (
                "has no class folders: image_folder reads root/<class>/<image> "
                f"({', '.join(EXTENSIONS)}); files directly in root are not read"
            )
            raise DataError([Problem(root, why)])
        files, labels = [], []
        for name in classes:
            found = files_under(os.path.join(root, name))
            if not found:
                why = f"class folder {name!r} has no image files ({', '.join(EXTENSIONS)})"
                problems.append(Problem(os.path.join(root, name), why))
            files.extend(found)
            labels.extend([name] * len(found))
        # size and channels set: each file's pixels decoded when its header is read (one
        # opening, not two; every image is decoded by the first epoch anyway)
        known = self.size is not None and self.channels is not None and not self.skip_bad
        store = DecodedImages(files, self.size, self.channels) if known else None
        source = self._checked(files, labels, classes, problems, store)
        counts = {c: 0 for c in classes}
        for label in source.labels:
            counts[label] += 1
        empty = [c for c in classes if counts[c] == 0]  # possible only once bad files are skipped
        if empty and source.skipped:
            why = "every image in class folder {!r} was bad and skipped"
            raise DataError([Problem(os.path.join(root, c), why.format(c)) for c in empty])
        return source

    def _read_inputs(self, path: str) -> ImageSource:
        if os.path.isfile(path):
            if not is_image_name(os.path.basename(path)):
                why = f"is not an image file (expected one of {', '.join(EXTENSIONS)})"
                raise DataError([Problem(path, why)])
            files, labels = [path], [os.path.basename(os.path.dirname(os.path.abspath(path)))]
        elif os.path.isdir(path):
            files = files_under(path)
            labels = [_class_of(f, path) for f in files]
        else:
            files = matching(path) if any(c in path for c in "*?[") else []
            if not files and not any(c in path for c in "*?["):
                raise DataError([Problem(path, "no such file or folder")])
            labels = [os.path.basename(os.path.dirname(os.path.abspath(f))) for f in files]
        if not files:
            why = f"has no image files ({', '.join(EXTENSIONS)})"
            raise DataError([Problem(path, why)])
        return self._checked(files, labels, [], [])

    def _checked(
        self,
        files: list[str],
        labels: list[Any],
        classes: list[str],
        problems: list[Problem],
        store: DecodedImages | None = None,
    ) -> ImageSource:
        """Each file's header read (and with ``skip_bad`` its pixels decoded once; into
        ``store``, the decoded images of ``files``, when given): bad files are problems, or
        skipped and counted."""
        good_files, good_labels, headers, skipped = [], [], [], []
        for i, (path, label) in enumerate(zip(files, labels)):
            try:
                header = probe(path) if store is None else store.probe_and_keep(i)
                if self.skip_bad:
                    decode(path, (header.height, header.width), 1 if header.gray else 3)
            except BadImage as err:
                (skipped if self.skip_bad else problems).append(Problem(path, str(err)))
                continue
            good_files.append(path)
            good_labels.append(label)
            headers.append(header)
        if problems:
            raise _limited(problems)
        if skipped:
            shown = "; ".join(str(p) for p in skipped[:3]) + (" ..." if len(skipped) > 3 else "")
            print(f"skip_bad: skipped {len(skipped)} bad image(s): {shown}", file=sys.stderr)
        return ImageSource(good_files, good_labels, headers, classes, skipped, store)

    # ------------------------------------------------------------------ fitting
    def fit(self, source: ImageSource, train: Sequence[int]) -> dict[str, Any]:
        """Size, channels and (``normalize: auto``) per-channel mean and std, from the training
        images only; class names from the folders."""
        rows = list(train)
        if not rows:
            raise DataError([Problem(self.root or "root", "no training images to fit on")])
        size = self.size
        if size is None:
            size = self._common_size(source, rows)
        channels = self.channels
        if channels is None:
            channels = 1 if all(source.headers[i].gray for i in rows) else 3
        mean = std = None
        if isinstance(self.normalize, dict):
            mean, std = self._given_stats(channels)
        elif self.normalize == "auto":
            mean, std = _fitted_stats(source.decoded(size, channels), rows)
        return {
            "classes": list(source.classes),
            "size": [size[0], size[1]],
            "channels": channels,
            "mean": mean,
            "std": std,
            "skipped_bad": len(source.skipped),
        }

    def _common_size(self, source: ImageSource, rows: list[int]) -> tuple[int, int]:
        first = source.headers[rows[0]]
        for i in rows:
            h = source.headers[i]
            if (h.height, h.width) != (first.height, first.width):
                why = (
                    f"is {h.height}x{h.width} but {source.files[rows[0]]} is "
                    f"{first.height}x{first.width}: set size (e.g. size: [{first.height}, "
                    f"{first.width}]) to resize every image"
                )
                raise DataError([Problem(source.files[i], why)])
        return first.height, first.width

    def _given_stats(self, channels: int) -> tuple[list[float], list[float]]:
        mean, std = self.normalize["mean"], self.normalize["std"]
        if len(mean) == 1:
            mean, std = mean * channels, std * channels
        if len(mean) != channels:
            why = f"has {len(mean)} values for images of {channels} channel(s)"
            raise DataError([Problem("normalize", why)])
        return list(mean), list(std)

    # ------------------------------------------------------------------ samples
    def samples(
        self,
        source: ImageSource,
        state: dict[str, Any],
        rows: Sequence[int] | None = None,
        train: bool = False,
    ) -> ImageFolderDataset:
        """The images of ``rows`` with their class indices; augmented when ``train``."""
        rows = range(len(source)) if rows is None else rows
        index = {name: i for i, name in enumerate(state["classes"])}
        problems, targets = [], []
        for i in rows:
            label = source.labels[i]
            if label is None:
                why = (
                    "is not in a class folder: labelled images are read from FOLDER/<class>/<file>"
                )
                problems.append(Problem(source.files[i], why))
            elif label not in index:
                why = (
                    f"is in folder {label!r}, not one of the run's class folders "
                    f"({', '.join(state['classes'])})"
                )
                problems.append(Problem(source.files[i], why))
            else:
                targets.append(index[label])
        if problems:
            raise _limited(problems)
        files = [source.files[i] for i in rows]
        size, channels, transform = self._pipeline(state, train)
        store = source.decoded(size, channels)
        return ImageFolderDataset(files, targets, size, channels, transform, store, rows)

    def inputs(self, source: ImageSource, state: dict[str, Any]) -> ImageFolderDataset:
        """The images alone, preprocessed as for validation, for ``agrad predict``."""
        return ImageFolderDataset(source.files, None, *self._pipeline(state, False))

    def _pipeline(self, state: dict[str, Any], train: bool) -> tuple[Any, ...]:
        size, channels = (state["size"][0], state["size"][1]), state["channels"]
        steps = [AUGMENTATIONS[name](**args) for name, args in self.augment] if train else []
        if state.get("mean") is not None:
            steps.append(Normalize(state["mean"], state["std"]))
        return size, channels, Compose(steps) if steps else None

    def names(self, source: ImageSource) -> list[str]:
        """The image paths, as the user named them."""
        return list(source.files)

    def sizes(self, state: dict[str, Any]) -> dict[str, int]:
        return {"classes": len(state["classes"])}

    def class_names(self, state: dict[str, Any]) -> list[str]:
        return list(state["classes"])


def _class_of(path: str, top: str) -> str | None:
    """The first folder level under ``top`` holding ``path`` (its class), or None."""
    parts = os.path.relpath(path, top).split(os.sep)
    return parts[0] if len(parts) > 1 else None


def _fitted_stats(store: DecodedImages, rows: Sequence[int]) -> tuple[list, list]:
    """Per-channel mean and (population) std over every pixel of images ``rows`` of ``store``,
    decoded one at a time (and kept there for the epochs); a channel with no spread keeps std 1
    (no scaling)."""
    channels = store.channels
    total = np.zeros(channels, np.float64)
    squares = np.zeros(channels, np.float64)
    for i in rows:
        try:
            img = to_float(store.pixels(i)).astype(np.float64)
        except BadImage as err:
            raise DataError([Problem(store.files[i], str(err))]) from None
        total += img.sum(axis=(1, 2))
        squares += (img * img).sum(axis=(1, 2))
    count = len(rows) * store.size[0] * store.size[1]
    mean = total / count
    std = np.sqrt(np.maximum(squares / count - mean * mean, 0.0))
    std[std < 1e-12] = 1.0
    return [float(m) for m in mean], [float(s) for s in std]
