"""The metric against each searched parameter: one SVG scatter plot per parameter, drawn as the
loss plot is (``trainer/plot.py``: its size, margins and tick rule). Pruned trials are grey at
their last reported value; a log-range parameter has a log axis; choices are categories."""

from __future__ import annotations

import math
from typing import Any
from xml.sax.saxutils import escape

from ..trainer.plot import (
    HEIGHT,
    WIDTH,
    _fmt,
    axes,
    nice_ticks,
    scales,
    svg_head,
    tick_marks,
)

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
    out = svg_head(f"{metric} against {param}")
    xs, x_ticks = _x_axis([p[0] for p in points], space)
    ys = [p[1] for p in points]
    if points:
        tick_pos = [t for t, _ in x_ticks]
        x_lo, x_hi = min(xs + tick_pos), max(xs + tick_pos)
        pad = (x_hi - x_lo) * 0.05 or 0.5
        x_lo, x_hi = x_lo - pad, x_hi + pad
        sx, sy, y_ticks = scales(x_lo, x_hi, ys)
        out += tick_marks(y_ticks, sy, [(sx(t), label) for t, label in x_ticks])
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
    out.append(axes(param, metric))
    out.append("</svg>")
    return "\n".join(out) + "\n"
