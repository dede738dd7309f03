"""Hand-made SVG charts for the HTML report: an interval plot and a line chart, as inline markup.

No dependency and no network: each chart is an ``<svg>`` element (HTML5 inline SVG, so it needs no
namespace declaration) sized by its ``viewBox`` and scaled by the page's CSS. Every label that comes
from outside (a bot's name) is escaped here; numbers are formatted here. A value that has none
(``nan``) is left out of a chart, and an interval end that is infinite runs to the edge of the plot,
dashed, so an open interval is never drawn as if it were known.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Sequence

__all__ = ["Interval", "Series", "color", "dash", "interval_plot", "line_chart", "nice_ticks"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
           "#bcbd22")
"""Line and marker colours, in the order bots are listed; after ten, the colours repeat with a dash."""
DASHES = ("", "7 4", "2 3", "9 3 2 3")
WIDTH = 760
LABEL_CHARS = 24
"""Characters of a label drawn in a chart (the whole label is in its tooltip)."""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def color(index: int) -> str:
    """The colour of the ``index``-th bot."""
    return PALETTE[index % len(PALETTE)]


def dash(index: int) -> str:
    """The dash pattern of the ``index``-th bot's line (none for the first ten)."""
    return DASHES[(index // len(PALETTE)) % len(DASHES)]


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _num(value: float) -> str:
    """A coordinate, short."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def nice_ticks(low: float, high: float, count: int = 5) -> tuple[float, float, list[float]]:
    """Round tick values covering ``[low, high]`` (about ``count`` of them), and the axis range they
    span: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if not (math.isfinite(low) and math.isfinite(high)):
        low, high = 0.0, 1.0
    if high - low < 1e-9:
        pad = max(abs(low) * 0.1, 1.0)
        low, high = low - pad, high + pad
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= raw * (1 - 1e-9))
    start = math.floor(low / step + 1e-9) * step
    end = math.ceil(high / step - 1e-9) * step
    ticks = [start + i * step for i in range(round((end - start) / step) + 1)]
    return start, end, [0.0 if abs(t) < step * 1e-9 else t for t in ticks]


def _tick_text(value: float, ticks: Sequence[float]) -> str:
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:  # a step of 2.5, 0.25, ...
        decimals += 1
    return f"{value:.{decimals}f}".replace("-", "−")


@dataclasses.dataclass(frozen=True)
class Interval:
    """One row of an interval plot: an estimate and its interval (ends may be infinite; nan: no value)."""

    label: str
    value: float
    low: float
    high: float
    color: str = PALETTE[0]
    tooltip: str = ""


def interval_plot(rows: Sequence[Interval], axis: str, description: str) -> str:
    """A horizontal interval plot: a row per label, a dot at the estimate and a bar over its interval,
    on one axis with zero marked."""
    left, right, top, bottom, step = 200, 30, 12, 52, 30
    height = top + bottom + step * max(len(rows), 1)
    known = [v for r in rows for v in (r.value, r.low, r.high) if math.isfinite(v)]
    low, high, ticks = nice_ticks(min([0.0, *known]), max([0.0, *known]))
    span = high - low

    def x(value: float) -> float:
        return left + (value - low) / span * (WIDTH - left - right)

    out = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
           f'aria-label="{_esc(description)}"><title>{_esc(description)}</title>']
    plot_bottom = height - bottom
    for tick in ticks:
        tx = _num(x(tick))
        out.append(f'<line class="grid" x1="{tx}" y1="{top}" x2="{tx}" y2="{plot_bottom}"/>'
                   f'<text class="tick" x="{tx}" y="{plot_bottom + 18}" text-anchor="middle">'
                   f"{_tick_text(tick, ticks)}</text>")
    zero = _num(x(0.0))
    out.append(f'<line class="zero" x1="{zero}" y1="{top}" x2="{zero}" y2="{plot_bottom}"/>')
    out.append(f'<line class="axis" x1="{left}" y1="{plot_bottom}" x2="{WIDTH - right}" y2="{plot_bottom}"/>')
    out.append(f'<text class="axis-label" x="{_num((left + WIDTH - right) / 2)}" y="{height - 10}" '
               f'text-anchor="middle">{_esc(axis)}</text>')
    for index, row in enumerate(rows):
        y = top + step * index + step / 2
        tip = _esc(row.tooltip or row.label)
        out.append(f"<g><title>{tip}</title>"
                   f'<text class="label" x="{left - 10}" y="{_num(y + 5)}" text-anchor="end">'
                   f"{_esc(_short(row.label))}</text>")
        if not math.isfinite(row.value):
            out.append(f'<text class="none" x="{left + 8}" y="{_num(y + 5)}">no score yet</text></g>')
            continue
        x_low = x(row.low) if math.isfinite(row.low) else float(left)
        x_high = x(row.high) if math.isfinite(row.high) else float(WIDTH - right)
        open_ends = not (math.isfinite(row.low) and math.isfinite(row.high))
        style = ' stroke-dasharray="5 4"' if open_ends else ""
        out.append(f'<line class="bar" x1="{_num(x_low)}" y1="{_num(y)}" x2="{_num(x_high)}" y2="{_num(y)}" '
                   f'stroke="{row.color}"{style}/>')
        for end, finite in ((x_low, math.isfinite(row.low)), (x_high, math.isfinite(row.high))):
            if finite:
                out.append(f'<line class="cap" x1="{_num(end)}" y1="{_num(y - 7)}" x2="{_num(end)}" '
                           f'y2="{_num(y + 7)}" stroke="{row.color}"/>')
        out.append(f'<circle class="dot" cx="{_num(x(row.value))}" cy="{_num(y)}" r="6" fill="{row.color}"/></g>')
    out.append("</svg>")
    return "".join(out)


@dataclasses.dataclass(frozen=True)
class Series:
    """One line of a line chart: a value per x of the chart (nan: no value there)."""

    label: str
    values: Sequence[float]
    color: str = PALETTE[0]
    dash: str = ""


def line_chart(series: Sequence[Series], xs: Sequence[int], x_axis: str, y_axis: str, description: str) -> str:
    """A line chart of ``series`` over the whole numbers ``xs`` (increasing, from 1), with a dot at each
    point when there are few, lines broken where a value is missing, and zero marked when it is in range."""
    left, right, top, bottom, height = 64, 20, 14, 52, 330
    known = [v for s in series for v in s.values if math.isfinite(v)]
    low, high, ticks = nice_ticks(min(known, default=0.0), max(known, default=1.0))
    last = max(xs, default=1)
    x_low, x_high, x_ticks = nice_ticks(1.0, float(max(last, 2)), 8)
    x_low = max(x_low, 1.0) if last > 1 else 0.0
    x_ticks = [t for t in x_ticks if t >= x_low and float(t).is_integer()]
    plot_bottom = height - bottom

    def x(position: float) -> float:
        return left + (position - x_low) / (x_high - x_low) * (WIDTH - left - right)

    def y(value: float) -> float:
        return plot_bottom - (value - low) / (high - low) * (plot_bottom - top)

    out = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
           f'aria-label="{_esc(description)}"><title>{_esc(description)}</title>']
    for tick in ticks:
        ty = _num(y(tick))
        out.append(f'<line class="grid" x1="{left}" y1="{ty}" x2="{WIDTH - right}" y2="{ty}"/>'
                   f'<text class="tick" x="{left - 8}" y="{_num(y(tick) + 5)}" text-anchor="end">'
                   f"{_tick_text(tick, ticks)}</text>")
    for tick in x_ticks:
        tx = _num(x(tick))
        out.append(f'<text class="tick" x="{tx}" y="{plot_bottom + 18}" text-anchor="middle">{tick:.0f}</text>')
    if low < 0 < high:
        out.append(f'<line class="zero" x1="{left}" y1="{_num(y(0.0))}" x2="{WIDTH - right}" y2="{_num(y(0.0))}"/>')
    out.append(f'<line class="axis" x1="{left}" y1="{plot_bottom}" x2="{WIDTH - right}" y2="{plot_bottom}"/>'
               f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{plot_bottom}"/>')
    out.append(f'<text class="axis-label" x="{_num((left + WIDTH - right) / 2)}" y="{height - 10}" '
               f'text-anchor="middle">{_esc(x_axis)}</text>'
               f'<text class="axis-label" transform="translate(16 {_num((top + plot_bottom) / 2)}) rotate(-90)" '
               f'text-anchor="middle">{_esc(y_axis)}</text>')
    dots = len(xs) <= 40
    for line in series:
        path: list[str] = []
        points: list[str] = []
        pen_down = False
        for index, (at, value) in enumerate(zip(xs, line.values, strict=True)):
            if not math.isfinite(value):
                pen_down = False
                continue
            px, py = _num(x(at)), _num(y(value))
            path.append(f"{'L' if pen_down else 'M'}{px} {py}")
            pen_down = True
            if dots or index == len(xs) - 1:
                points.append(f'<circle cx="{px}" cy="{py}" r="3.5" fill="{line.color}"/>')
        style = f' stroke-dasharray="{line.dash}"' if line.dash else ""
        out.append(f"<g><title>{_esc(line.label)}</title>"
                   + (f'<path class="line" d="{" ".join(path)}" stroke="{line.color}"{style}/>' if path else "")
                   + "".join(points) + "</g>")
    out.append("</svg>")
    return "".join(out)
