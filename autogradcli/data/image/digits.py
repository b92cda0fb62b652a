"""Write the bundled digits as an image folder (``FOLDER/<digit>/<n>.png`` and ``.jpg``,
alternately, 32x32 grayscale), the data of ``configs/image_folder.yaml``:

    python -m autogradcli.data.image.digits data/digit_images
"""

from __future__ import annotations

import os
import sys

import numpy as np

__all__ = ["write_digit_images"]


def write_digit_images(folder: str | os.PathLike, size: int = 32, limit: int | None = None) -> int:
    """Write the digits (the first ``limit``, or all 1,797) upscaled to ``size`` x ``size``:
    even-numbered images as PNG, odd ones as JPEG. Returns the number written."""
    from PIL import Image

    from ..files import load_digits

    data = load_digits()
    images = data.tensors[0].numpy()[:limit, 0]
    labels = data.tensors[1].numpy()[:limit]
    for n, (img, label) in enumerate(zip(images, labels)):
        where = os.path.join(os.fspath(folder), str(int(label)))
        os.makedirs(where, exist_ok=True)
        pixels = Image.fromarray(np.rint(img * 255).astype(np.uint8))
        pixels = pixels.resize((size, size), Image.Resampling.BILINEAR)
        if n % 2 == 0:
            pixels.save(os.path.join(where, f"{n:04d}.png"))
        else:
            pixels.save(os.path.join(where, f"{n:04d}.jpg"), quality=95)
    return len(images)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m autogradcli.data.image.digits FOLDER", file=sys.stderr)
        return 2
    n = write_digit_images(args[0])
    print(f"wrote {n} images to {args[0]}/<digit>/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
