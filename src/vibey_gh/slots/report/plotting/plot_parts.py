"""What the report's plots share: a figure of stacked axes, N on the x axis, points per step
(crossed where the step broke what the point shows), the colours. matplotlib is imported only
to draw."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ...evidence.store import Evidence
from ...judging.judge import SweepJudgement, Verdict
from ...judging.step_findings import short_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
INSIDE_COLOUR, BROKEN_COLOUR, BAND_COLOUR = "tab:blue", "tab:red", "tab:gray"
LIMIT_COLOUR, IDEAL_COLOUR = "tab:green", "gold"


def new_figure(
    rows: int, height: float, title: str, width: float = 11.0
) -> tuple[Figure, list[Axes]]:
    """A figure of `rows` axes sharing x, titled "heading — subject" on two lines."""
    # lazy: matplotlib is an optional extra ([plots]), set up by `plots` before its first import
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    axes = list(figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0])
    # the heading, then what was measured on a line of its own: neither is cut at the edges
    heading, _, subject = title.partition(" — ")
    if subject:  # wrapped to the figure's width, never cut: it says what was measured
        heading += "\n" + textwrap.fill(subject, int(width * TITLE_CHARS_PER_INCH))
    figure.suptitle(heading, fontsize=11)
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


Broke = Callable[[Verdict], bool]


def breaks_any(verdict: Verdict) -> bool:
    """The step broke a bound (the throughput plot: such a step does not count)."""
    return not verdict.inside_bounds


def breaks_none(verdict: Verdict) -> bool:
    """A series that is reported, never a bound: no point of it is crossed."""
    return False


def breaks(*names: str) -> Broke:
    """The step broke one of the bounds `names` ("fidelity", "ttft_p95_seconds"): a plot of
    one figure crosses only the points whose own bound broke."""

    def broke(verdict: Verdict) -> bool:
        return any(short_name(finding) in names for finding in verdict.broken)

    return broke


def points(
    ax: Axes,
    verdicts: Sequence[Verdict],
    values: Sequence[float | None],
    label: str,
    marker: str = "o",
    shift: float = 0.0,
    hollow: bool = False,
    broke: Broke = breaks_any,
) -> None:
    """Markers for every step (crossed where `broke` says the step broke what the point
    shows) and a line through the means.

    `shift` nudges the markers sideways so two series that agree do not hide each other.
    `hollow`: a step measured without an interval gets an empty marker (throughput).
    """
    xs, means = mean_by_slots(verdicts, values)
    (line,) = ax.plot([x + shift for x in xs], means, linewidth=1.5)
    colour = line.get_color()
    ax.plot([], [], marker=marker, color=colour, linewidth=1.5, label=label)
    for verdict, value in zip(verdicts, values, strict=True):
        if value is None:
            continue
        broken = broke(verdict)
        ax.plot(
            [verdict.slots + shift],
            [value],
            marker="X" if broken else marker,
            markersize=9 if broken else 7,
            color=BROKEN_COLOUR if broken else colour,
            # a point measured without an interval is drawn hollow: it is not a finding
            markerfacecolor="none" if hollow and not (broken or has_interval(verdict)) else None,
            linestyle="none",
        )


def broken_legend(
    ax: Axes,
    verdicts: Sequence[Verdict],
    hollow: bool = False,
    broke: Broke = breaks_any,
    what: str = "a bound",
) -> None:
    if any(broke(v) for v in verdicts):
        ax.plot([], [], marker="X", color=BROKEN_COLOUR, linestyle="none", label=f"breaks {what}")
    if hollow and any(not has_interval(v) for v in verdicts):
        ax.plot(
            [], [], marker="o", color="black", markerfacecolor="none", linestyle="none",
            label="hollow: no interval (too few turns)",
        )  # fmt: skip
    legend_beside(ax)


def legend_beside(ax: Axes) -> None:
    """The legend to the right of the axes, never over a point."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def has_interval(verdict: Verdict) -> bool:
    return verdict.confidence is not None and math.isfinite(verdict.rate_high)


def ideal_line(ax: Axes, judgement: SweepJudgement, label: bool = True) -> None:
    """A vertical line at the ideal N, on every plot against slots."""
    chosen = judgement.verdict_for(judgement.ideal)
    if chosen is None or not chosen.qualifies:
        return
    ax.axvline(
        chosen.slots,
        color=IDEAL_COLOUR,
        linewidth=2.5,
        alpha=0.6,
        zorder=0,
        label=f"ideal N = {chosen.slots}" if label else "_nolegend_",
    )


# characters of an 11-point title line per inch of the figure's width, with room to spare
TITLE_CHARS_PER_INCH = 12


def plot_title(evidence: Evidence) -> str:
    """What was measured, for people: model, runner, device and window (the fingerprint's
    hash says none of it), wrapped to the plot's width where it is long."""
    on = evidence.measured_on
    runner = evidence.document.runner
    model = runner.get("model") if isinstance(runner, dict) else None
    device = on.hardware_model or on.processor or "an unnamed device"
    if on.accelerators and isinstance(on.accelerators[0], str):
        device += f" + {on.accelerators[0]}"
    kind, version = on.runner_kind or "runner", on.runner_version or ""
    # "simulated 0.1.0" already names its kind: no "simulated simulated 0.1.0"
    runner_text = version if version.startswith(kind) else f"{kind} {version}".strip()
    name = _short_model(model) if model else "model " + str(on.model_digest)[:12]
    return f"{name} on {runner_text}, {device}, window {on.window}"


def _short_model(model: str) -> str:
    """A model file's name without its folders (the folders say nothing of the model)."""
    return model.replace("\\", "/").rsplit("/", 1)[-1]
