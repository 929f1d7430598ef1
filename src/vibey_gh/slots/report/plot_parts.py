"""What the report's plots share: a figure of stacked axes, N on the x axis, points per step
(crossed where a step breaks a bound), the colours. matplotlib is imported only to draw."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..judging.judge import Verdict

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
INSIDE_COLOUR, BROKEN_COLOUR, BAND_COLOUR = "tab:blue", "tab:red", "tab:gray"
LIMIT_COLOUR, IDEAL_COLOUR = "tab:green", "gold"


def new_figure(
    rows: int, height: float, title: str, width: float = 9.0
) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    axes = list(figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0])
    figure.suptitle(title, fontsize=12)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return figure, axes


def slot_ticks(ax: Axes, verdicts: Sequence[Verdict]) -> None:
    ticks = sorted({v.slots for v in verdicts})
    ax.set_xticks(ticks)
    ax.set_xlim(min(ticks, default=1) - 0.5, max(ticks, default=1) + 0.5)
    ax.set_xlabel("slots (N parallel sequences)")


def mean_by_slots(
    verdicts: Sequence[Verdict], values: Sequence[float | None]
) -> tuple[list[int], list[float]]:
    grouped: dict[int, list[float]] = {}
    for verdict, value in zip(verdicts, values, strict=True):
        if value is not None:
            grouped.setdefault(verdict.slots, []).append(value)
    xs = sorted(grouped)
    return xs, [sum(grouped[x]) / len(grouped[x]) for x in xs]


def points(
    ax: Axes,
    verdicts: Sequence[Verdict],
    values: Sequence[float | None],
    label: str,
    marker: str = "o",
    shift: float = 0.0,
) -> None:
    """Markers for every step (crossed when it breaks a bound) and a line through the means.

    `shift` nudges the markers sideways so two series that agree do not hide each other.
    """
    xs, means = mean_by_slots(verdicts, values)
    (line,) = ax.plot([x + shift for x in xs], means, linewidth=1.5)
    colour = line.get_color()
    ax.plot([], [], marker=marker, color=colour, linewidth=1.5, label=label)
    for verdict, value in zip(verdicts, values, strict=True):
        if value is None:
            continue
        broken = not verdict.inside_bounds
        ax.plot(
            [verdict.slots + shift],
            [value],
            marker="X" if broken else marker,
            markersize=9 if broken else 7,
            color=BROKEN_COLOUR if broken else colour,
            linestyle="none",
        )


def broken_legend(ax: Axes, verdicts: Sequence[Verdict]) -> None:
    if any(not v.inside_bounds for v in verdicts):
        ax.plot([], [], marker="X", color=BROKEN_COLOUR, linestyle="none", label="breaks a bound")
    ax.legend(fontsize=8, loc="best")
