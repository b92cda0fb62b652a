"""Hand-written SVG line plots of the loss and accuracy curves (no plotting library needed)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = [
    "acc_svg",
    "axes",
    "escape",
    "loss_svg",
    "metric_svg",
    "nice_ticks",
    "scales",
    "svg_head",
    "tick_marks",
]

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 50
SERIES = (("train_loss", "train loss", "#1f77b4"), ("val_loss", "val loss", "#ff7f0e"))
ACC_SERIES = (("train_acc", "train acc", "#1f77b4"), ("val_acc", "val acc", "#ff7f0e"))


def escape(text: str) -> str:
    """``text`` safe as an SVG element's content: ``&``, ``<`` and ``>`` as entities (what
    ``xml.sax.saxutils.escape`` gives, without its import of urllib, http and ssl: ~15 ms of
    every ``agrad train``'s start)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering ``[lo, hi]``."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(n, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    v = start
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 12))
        v += step
    if ticks and ticks[-1] < hi:
        ticks.append(round(v, 12))
    return ticks


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def scales(x_lo: float, x_hi: float, ys: Sequence[float]) -> tuple[Any, Any, list[float]]:
    """(x to pixel, y to pixel, y ticks): x over ``[x_lo, x_hi]``, y over round ticks
    covering ``ys``, both onto the plot area."""
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    y_ticks = nice_ticks(min(ys), max(ys))
    y_lo, y_hi = y_ticks[0], y_ticks[-1]
    if y_hi == y_lo:
        y_hi = y_lo + 1

    def sx(x: float) -> float:
        return LEFT + (x - x_lo) / (x_hi - x_lo) * pw

    def sy(y: float) -> float:
        return TOP + ph - (y - y_lo) / (y_hi - y_lo) * ph

    return sx, sy, y_ticks


def svg_head(title: str) -> list[str]:
    """The opening lines of a plot: the SVG element, a white page and the title."""
    return [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>',
    ]


def tick_marks(
    y_ticks: Sequence[float], sy: Any, x_ticks: Sequence[tuple[float, str]]
) -> list[str]:
    """Horizontal grid lines with their labels at ``y_ticks`` (``sy``: value to pixel), and
    marks with labels at ``x_ticks`` (pixel x, label) under the plot area."""
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    out = []
    for t in y_ticks:
        y = sy(t)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.2f}" x2="{LEFT + pw}" y2="{y:.2f}" stroke="#e0e0e0"/>'
        )
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.2f}" text-anchor="end">{_fmt(t)}</text>')
    for x, label in x_ticks:
        out.append(
            f'<line x1="{x:.2f}" y1="{TOP + ph}" x2="{x:.2f}" y2="{TOP + ph + 5}" stroke="black"/>'
        )
        out.append(
            f'<text x="{x:.2f}" y="{TOP + ph + 18}" text-anchor="middle">{escape(label)}</text>'
        )
    return out


def axes(x_label: str, y_label: str) -> str:
    """The two axis lines and their labels."""
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    return (
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + ph}" stroke="black"/>'
        f'<line x1="{LEFT}" y1="{TOP + ph}" x2="{LEFT + pw}" y2="{TOP + ph}" stroke="black"/>'
        f'<text x="{LEFT + pw / 2}" y="{HEIGHT - 10}" text-anchor="middle">{escape(x_label)}</text>'
        f'<text x="16" y="{TOP + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {TOP + ph / 2})">{escape(y_label)}</text>'
    )


def loss_svg(history: Sequence[dict[str, Any]], title: str = "loss") -> str:
    """An SVG document plotting ``train_loss`` and ``val_loss`` against ``epoch``."""
    return metric_svg(history, SERIES, title, "loss")


def acc_svg(history: Sequence[dict[str, Any]], title: str = "accuracy") -> str:
    """An SVG document plotting ``train_acc`` and ``val_acc`` against ``epoch``."""
    return metric_svg(history, ACC_SERIES, title, "accuracy")


def metric_svg(
    history: Sequence[dict[str, Any]],
    series: Sequence[tuple[str, str, str]],
    title: str,
    y_label: str,
) -> str:
    """An SVG line plot of ``series`` (``(key, label, colour)``) against ``epoch``."""
    points: dict[str, list[tuple[float, float]]] = {}
    for key, _, _ in series:
        pts = []
        for row in history:
            v, e = row.get(key), row.get("epoch")
            if isinstance(v, (int, float)) and math.isfinite(v) and isinstance(e, (int, float)):
                pts.append((float(e), float(v)))
        points[key] = pts
    xs = [p[0] for pts in points.values() for p in pts]
    ys = [p[1] for pts in points.values() for p in pts]
    pw = WIDTH - LEFT - RIGHT
    out = svg_head(title)
    if xs:
        x_lo, x_hi = min(xs), max(xs)
        if x_hi == x_lo:
            x_lo, x_hi = x_lo - 1, x_hi + 1
        sx, sy, y_ticks = scales(x_lo, x_hi, ys)
        # x axis ticks: integer epochs, at most ~10 labels
        first, last = math.ceil(x_lo), math.floor(x_hi)
        every = max(1, math.ceil((last - first + 1) / 10))
        epochs = range(first, last + 1, every)
        out += tick_marks(y_ticks, sy, [(sx(e), str(e)) for e in epochs])
        # series
        for key, label, color in series:
            pts = points[key]
            if not pts:
                continue
            coords = " ".join(f"{sx(x):.2f},{sy(y):.2f}" for x, y in pts)
            out.append(
                f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2">'
                f"<title>{escape(label)}</title></polyline>"
            )
            for x, y in pts:
                out.append(f'<circle cx="{sx(x):.2f}" cy="{sy(y):.2f}" r="2.5" fill="{color}"/>')
    else:
        out.append(
            f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle" fill="#888">'
            "no finished epoch yet</text>"
        )
    # axes and labels
    out.append(axes("epoch", y_label))
    # legend
    lx, ly = LEFT + pw - 110, TOP + 8
    out.append(f'<rect x="{lx}" y="{ly}" width="104" height="44" fill="white" stroke="#999"/>')
    for i, (_, label, color) in enumerate(series):
        y = ly + 15 + i * 18
        out.append(
            f'<line x1="{lx + 8}" y1="{y - 4}" x2="{lx + 30}" y2="{y - 4}" stroke="{color}" '
            f'stroke-width="2"/><text x="{lx + 36}" y="{y}">{escape(label)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
