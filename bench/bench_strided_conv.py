"""Strided convolutions, forward + backward, beside torch and optionally an older tree, one
thread, in one rotation: the downsampling layers of nn_tutorial's CNN, a DCGAN discriminator
and a CIFAR ResNet, whose input gradient is where our whole-batch path spent its time.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/bench_strided_conv.py [--rounds 30]
    ... --before /tmp/old   # an older tree's package too (git archive), paired

Then each layer's input gradient on arrays, the usual col2im against col2im_pixel_major (the
rule that picks the latter). bench/README.md's "Strided convolutions" figures come from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from bench_select import side_by_side, table_args

# (batch, in channels, out channels, image side, kernel): stride 2, padding 1
LAYERS = [
    (64, 16, 16, 14, 3),  # nn_tutorial: 14x14 -> 7x7
    (64, 16, 10, 7, 3),  # nn_tutorial: 7x7 -> 4x4
    (16, 16, 32, 16, 4),  # DCGAN discriminator (ndf 16): 16x16 -> 8x8
    (16, 32, 64, 8, 4),  # ... 8x8 -> 4x4
    (128, 64, 128, 16, 3),  # CIFAR ResNet: 16x16 -> 8x8
    (128, 128, 256, 8, 3),  # ... 8x8 -> 4x4
]


def layers(lib: Any) -> dict[str, tuple[Any, Any, Any]]:
    """(conv, input, upstream gradient) of each layer on ``lib``, from the same numpy data."""
    rng = np.random.default_rng(0)
    out = {}
    for n, ci, co, hw, k in LAYERS:
        conv = lib.nn.Conv2d(ci, co, k, stride=2, padding=1)
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(rng.standard_normal((co, ci, k, k)).astype(np.float32)))
            conv.bias.zero_()
        x = lib.tensor(rng.standard_normal((n, ci, hw, hw)).astype(np.float32), requires_grad=True)
        side = (hw + 2 - k) // 2 + 1
        g = lib.tensor(rng.standard_normal((n, co, side, side)).astype(np.float32))
        out[f"{ci}->{co}, {k}x{k}, {hw}x{hw} -> {side}x{side}, batch {n}"] = (conv, x, g)
    return out


def cases(lib: Any) -> dict[str, Callable[[], Any]]:
    """Each layer's forward and backward on ``lib``."""
    return {
        name: (lambda conv=conv, x=x, g=g: conv(x).backward(g))
        for name, (conv, x, g) in layers(lib).items()
    }


def gradient_forms(layer: tuple[int, ...]) -> dict[str, Callable[[], Any]]:
    """A layer's input gradient on arrays both ways, each to contiguous NCHW: col2im of the
    product in (N, Ho, Wo) column order, and col2im_pixel_major of it in (Ho, Wo, N) order."""
    from autogradcli.ops.im2col import col2im, col2im_pixel_major

    n, ci, co, hw, k = layer
    side = (hw + 2 - k) // 2 + 1
    rng = np.random.default_rng(0)
    g = rng.standard_normal((n, co, side, side)).astype(np.float32)
    w = rng.standard_normal((co, ci * k * k)).astype(np.float32)
    geometry = ((n, ci, hw, hw), (k, k), (2, 2), (1, 1, 1, 1), (1, 1))

    def usual() -> Any:
        cols = w.T @ g.transpose(1, 0, 2, 3).reshape(co, -1)
        return np.ascontiguousarray(col2im(cols, *geometry))

    def pixel_major() -> Any:
        cols = w.T @ np.ascontiguousarray(g.transpose(1, 2, 3, 0)).reshape(co, -1)
        return col2im_pixel_major(cols, *geometry)

    return {"col2im": usual, "pixel-major": pixel_major}


def main() -> None:
    args = table_args(__doc__, 30)
    side_by_side(cases, args.rounds, args.before)
    import statistics

    from bench_floors import rotate, thread_count

    print("\n| input gradient on arrays | col2im us | pixel-major us | pixel-major / col2im |")
    print("|---|---|---|---|")
    with thread_count(1):
        for layer in [*LAYERS, (64, 64, 128, 32, 3)]:
            times = rotate(gradient_forms(layer), args.rounds, warmup=3)
            a, b = (statistics.median(times[f]) * 1e6 for f in ("col2im", "pixel-major"))
            n, ci, co, hw, k = layer
            print(
                f"| {ci}->{co}, {k}x{k}, {hw}x{hw}, batch {n} | {a:.0f} | {b:.0f} | {b / a:.2f} |"
            )


if __name__ == "__main__":
    main()
