"""The metric against each searched parameter: one SVG scatter plot per parameter, drawn as the
loss plot is (``trainer/plot.py``: its size, margins and tick rule). Pruned trials are grey at
their last reported value; a log-range parameter has a log axis; choices are categories."""

from __future__ import annotations

import math
from typing import Any
from xml.sax.saxutils import escape

from ..trainer.plot import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, _fmt, nice_ticks

__all__ = ["param_svg"]

COLORS = {"completed": "#1f77b4", "pruned": "#999999"}


def _x_axis(
    values: list[Any], space: dict[str, Any]
) -> tuple[list[float], list[tuple[float, str]]]:
    """Plot positions of ``values`` and the (position, label) ticks."""
    if space["type"] == "choice":
        labels = [str(v) for v in space["values"]]
        pos = [float(labels.index(str(v))) if str(v) in labels else 0.0 for v in values]
        return pos, [(float(i), label) for i, label in enumerate(labels)]
    if space.get("log"):
        lo, hi = math.log10(space["low"]), math.log10(space["high"])
        ticks = [(float(e), f"1e{e}") for e in range(math.ceil(lo), math.floor(hi) + 1)]
        return [math.log10(v) for v in values], ticks or [(lo, _fmt(space["low"]))]
    ticks = nice_ticks(float(space["low"]), float(space["high"]))
    return [float(v) for v in values], [(t, _fmt(t)) for t in ticks]


def param_svg(points: list[tuple[Any, float, str]], param: str, space: dict, metric: str) -> str:
    """An SVG of ``metric`` against ``param`` for ``points`` ``(value, metric, state)``."""
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">'
        f"{escape(metric)} against {escape(param)}</text>",
    ]
    xs, x_ticks = _x_axis([p[0] for p in points], space)
    ys = [p[1] for p in points]
    if points:
        tick_pos = [t for t, _ in x_ticks]
        x_lo, x_hi = min(xs + tick_pos), max(xs + tick_pos)
        pad = (x_hi - x_lo) * 0.05 or 0.5
        x_lo, x_hi = x_lo - pad, x_hi + pad
        y_ticks = nice_ticks(min(ys), max(ys))
        y_lo, y_hi = y_ticks[0], y_ticks[-1]
        if y_hi == y_lo:
            y_hi = y_lo + 1

        def sx(x: float) -> float:
            return LEFT + (x - x_lo) / (x_hi - x_lo) * pw

        def sy(y: float) -> float:
            return TOP + ph - (y - y_lo) / (y_hi - y_lo) * ph

        for t in y_ticks:
            y = sy(t)
            out.append(
                f'<line x1="{LEFT}" y1="{y:.2f}" x2="{LEFT + pw}" y2="{y:.2f}" stroke="#e0e0e0"/>'
            )
            out.append(f'<text x="{LEFT - 6}" y="{y + 4:.2f}" text-anchor="end">{_fmt(t)}</text>')
        for t, label in x_ticks:
            x = sx(t)
            out.append(
                f'<line x1="{x:.2f}" y1="{TOP + ph}" x2="{x:.2f}" y2="{TOP + ph + 5}" stroke="black"/>'
            )
            out.append(
                f'<text x="{x:.2f}" y="{TOP + ph + 18}" text-anchor="middle">{escape(label)}</text>'
            )
        for x, (value, y, state) in zip(xs, points):
            out.append(
                f'<circle cx="{sx(x):.2f}" cy="{sy(y):.2f}" r="4" fill="{COLORS.get(state, "#d62728")}">'
                f"<title>{escape(f'{param}={value}: {metric} {y:.4g} ({state})')}</title></circle>"
            )
    else:
        out.append(
            f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle" fill="#888">'
            "no finished trial yet</text>"
        )
    out.append(
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + ph}" stroke="black"/>'
        f'<line x1="{LEFT}" y1="{TOP + ph}" x2="{LEFT + pw}" y2="{TOP + ph}" stroke="black"/>'
        f'<text x="{LEFT + pw / 2}" y="{HEIGHT - 10}" text-anchor="middle">{escape(param)}</text>'
        f'<text x="16" y="{TOP + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {TOP + ph / 2})">{escape(metric)}</text>'
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"
