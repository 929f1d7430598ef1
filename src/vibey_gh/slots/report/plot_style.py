"""What every plot of the report shares: its colours, its size, its two-line title and a
legend beside the data rather than over it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
INSIDE_COLOUR, BROKEN_COLOUR, BAND_COLOUR = "tab:blue", "tab:red", "tab:gray"
LIMIT_COLOUR, IDEAL_COLOUR = "tab:green", "gold"


def figure_for(
    rows: int, height: float, title: str, width: float = 11.0
) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    axes = list(figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0])
    # the heading, then what was measured on a line of its own: neither is cut at the edges
    heading, _, subject = title.partition(" — ")
    figure.suptitle(f"{heading}\n{subject}" if subject else heading, fontsize=11)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return figure, axes


def legend_beside(ax: Axes) -> None:
    """The legend to the right of the axes, never over a point."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


__all__ = [
    "BAND_COLOUR",
    "BROKEN_COLOUR",
    "DPI",
    "IDEAL_COLOUR",
    "INSIDE_COLOUR",
    "LIMIT_COLOUR",
    "figure_for",
    "legend_beside",
]
