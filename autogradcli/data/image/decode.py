"""Opening and decoding one image file with Pillow (imported here, lazily: Pillow is the
``images`` extra). Every failure is a ``BadImage`` whose message says what is wrong with the
file, never a Pillow traceback."""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

__all__ = [
    "FORMATS",
    "BadImage",
    "Header",
    "decode",
    "decode_uint8",
    "probe",
    "probe_and_decode",
    "to_float",
]

FORMATS = ("BMP", "GIF", "JPEG", "PNG")  # Pillow's names of the formats we read
_GRAY_MODES = ("1", "L", "LA", "I", "I;16", "F")


class BadImage(Exception):
    """One file that is not a usable image; the message says why (without the path, which
    the caller adds)."""


class Header:
    """What a file's header says, read without decoding the pixels."""

    def __init__(self, height: int, width: int, gray: bool) -> None:
        self.height, self.width, self.gray = height, width, gray


def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise BadImage(
            "reading images needs Pillow: pip install 'autogradcli[images]' (or Pillow)"
        ) from None
    return Image


def _open(path: str) -> Any:
    """The file opened by Pillow (header only), with the decompression-bomb check an error."""
    image = _pillow()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", image.DecompressionBombWarning)
            img = image.open(path)
    except (image.DecompressionBombError, image.DecompressionBombWarning) as err:
        raise BadImage(f"refused: {_bomb_text(err)}") from None
    except image.UnidentifiedImageError:
        raise BadImage(
            f"not an image Pillow can read (expected one of {', '.join(FORMATS)})"
        ) from None
    except PermissionError:
        raise BadImage("cannot be read: permission denied") from None
    except OSError as err:
        raise BadImage(f"cannot be read: {err.strerror or err}") from None
    if img.format not in FORMATS:
        fmt = img.format
        img.close()
        raise BadImage(f"is a {fmt} image; only {', '.join(FORMATS)} are read")
    return img


def _bomb_text(err: BaseException) -> str:
    """Pillow's message names the pixel counts; we say what it means."""
    return f"{err} (the header claims more pixels than is safe to decode)"


def probe(path: str | os.PathLike) -> Header:
    """The header of ``path`` (size, grayscale or colour), checked against Pillow's
    decompression-bomb limit; ``BadImage`` if it is not a readable PNG/JPEG/BMP/GIF."""
    img = _open(os.fspath(path))
    with img:
        return _header(img)


def _header(img: Any) -> Header:
    width, height = img.size
    return Header(height, width, img.mode in _GRAY_MODES)


def probe_and_decode(
    path: str | os.PathLike, size: tuple[int, int], channels: int
) -> tuple[Header, np.ndarray | BadImage]:
    """``probe(path)`` and, from the same opening, ``decode_uint8(path, size, channels)``'s
    pixels, or the ``BadImage`` decoding raised (the header may be good and the data not);
    ``BadImage`` when the header is bad, as ``probe``."""
    img = _open(os.fspath(path))
    header = _header(img)
    try:
        return header, _pixels(img, size, channels)
    except BadImage as err:
        return header, err


def decode_uint8(path: str | os.PathLike, size: tuple[int, int], channels: int) -> np.ndarray:
    """The pixels of ``path`` as uint8 (channels, height, width): converted to grayscale
    (``L``) or RGB, then resized to ``size`` = (h, w) with bilinear resampling."""
    return _pixels(_open(os.fspath(path)), size, channels)


def _pixels(img: Any, size: tuple[int, int], channels: int) -> np.ndarray:
    """``decode_uint8`` of an image opened by ``_open`` (closed here)."""
    image = _pillow()
    try:
        with img, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # palette transparency notes and the like
            img.load()
            img = img.convert("L" if channels == 1 else "RGB")
            if img.size != (size[1], size[0]):
                img = img.resize((size[1], size[0]), image.Resampling.BILINEAR)
            pixels = np.asarray(img, dtype=np.uint8)
    except BadImage:
        raise
    except (OSError, ValueError, SyntaxError, EOFError) as err:  # truncated, bad data
        raise BadImage(f"cannot be decoded: {err}") from None
    return pixels[None] if channels == 1 else pixels.transpose(2, 0, 1)


def to_float(pixels: np.ndarray) -> np.ndarray:
    """uint8 pixels as float32 in [0, 1]."""
    return pixels.astype(np.float32) / np.float32(255.0)


def decode(path: str | os.PathLike, size: tuple[int, int], channels: int) -> np.ndarray:
    """The pixels of ``path`` as float32 (channels, height, width) in [0, 1] (``decode_uint8``
    scaled)."""
    return to_float(decode_uint8(path, size, channels))
