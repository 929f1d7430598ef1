"""PNG plots for the evidence report (matplotlib, headless).

matplotlib is imported inside the functions that draw: `slots allowed` imports the slots
package on every decision and must not pay for it. Figures are built as bare
`matplotlib.figure.Figure` objects (no pyplot, so no global state and no GUI backend) and
rendered to PNG bytes with the Agg canvas, then written atomically.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...files import atomic_write_bytes, ensure_private_dir
from ..evidence.store import Evidence
from ..judging.bounds import Bounds
from ..judging.judge import SweepJudgement, Verdict
from .memory_plot import SweepTimeline, memory_figure, sweep_timeline
from .plot_style import (
    BAND_COLOUR,
    BROKEN_COLOUR,
    DPI,
    IDEAL_COLOUR,
    LIMIT_COLOUR,
    figure_for,
    legend_beside,
)
from .step_table import step_rows

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOT_NAMES = ("throughput", "latency", "memory", "fidelity")
# How many axes each figure has: the tests check it, readers rely on the layout.
PLOT_AXES = {"throughput": 2, "latency": 1, "memory": 3, "fidelity": 1}


def _slot_ticks(ax: Axes, verdicts: Sequence[Verdict]) -> None:
    ticks = sorted({v.slots for v in verdicts})
    ax.set_xticks(ticks)
    ax.set_xlim(min(ticks, default=1) - 0.5, max(ticks, default=1) + 0.5)
    ax.set_xlabel("slots (N parallel sequences)")


def _mean_by_slots(
    verdicts: Sequence[Verdict], values: Sequence[float | None]
) -> tuple[list[int], list[float]]:
    grouped: dict[int, list[float]] = {}
    for verdict, value in zip(verdicts, values, strict=True):
        if value is not None:
            grouped.setdefault(verdict.slots, []).append(value)
    xs = sorted(grouped)
    return xs, [sum(grouped[x]) / len(grouped[x]) for x in xs]


def _points(
    ax: Axes,
    verdicts: Sequence[Verdict],
    values: Sequence[float | None],
    label: str,
    marker: str = "o",
    shift: float = 0.0,
    hollow: bool = False,
) -> None:
    """Markers for every step (crossed when it breaks a bound) and a line through the means.

    `shift` nudges the markers sideways so two series that agree do not hide each other.
    `hollow`: a step measured without an interval gets an empty marker (throughput).
    """
    xs, means = _mean_by_slots(verdicts, values)
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
            # a point measured without an interval is drawn hollow: it is not a finding
            markerfacecolor="none" if hollow and not (broken or _has_interval(verdict)) else None,
            linestyle="none",
        )


def _one_slot_band(ax: Axes, verdicts: Sequence[Verdict], values: Sequence[float]) -> None:
    one = [value for v, value in zip(verdicts, values, strict=True) if v.slots == 1]
    if len(one) >= 2:
        ax.axhspan(
            min(one),
            max(one),
            color=BAND_COLOUR,
            alpha=0.25,
            label="between the one-slot runs (noise)",
        )


def _broken_legend(ax: Axes, verdicts: Sequence[Verdict], hollow: bool = False) -> None:
    if any(not v.inside_bounds for v in verdicts):
        ax.plot([], [], marker="X", color=BROKEN_COLOUR, linestyle="none", label="breaks a bound")
    if hollow and any(not _has_interval(v) for v in verdicts):
        ax.plot(
            [], [], marker="o", color="black", markerfacecolor="none", linestyle="none",
            label="hollow: no interval (too few turns)",
        )  # fmt: skip
    legend_beside(ax)


def _has_interval(verdict: Verdict) -> bool:
    return verdict.confidence is not None and math.isfinite(verdict.turns_per_hour_high)


def _intervals(ax: Axes, verdicts: Sequence[Verdict], confidence: float | None) -> None:
    """Each step's throughput interval as an error bar."""
    shown = [v for v in verdicts if v.turns_per_hour_high > v.turns_per_hour_low]
    if not shown:
        return
    ax.errorbar(
        [v.slots for v in shown],
        [v.metrics.turns_per_hour for v in shown],
        yerr=[
            [v.metrics.turns_per_hour - v.turns_per_hour_low for v in shown],
            [v.turns_per_hour_high - v.metrics.turns_per_hour for v in shown],
        ],
        fmt="none",
        ecolor="black",
        elinewidth=1.0,
        capsize=4,
        label=f"{confidence:.0%} interval" if confidence else "interval",
    )


def _gain_line(ax: Axes, judgement: SweepJudgement, min_gain: float | None) -> None:
    best = judgement.figures.baseline.best_one_slot_turns_per_hour
    if min_gain is None or best <= 0:
        return
    ax.axhline(
        (1.0 + min_gain) * best,
        color=LIMIT_COLOUR,
        linestyle="--",
        linewidth=1.0,
        label=f"min_gain: {min_gain:.0%} above the better one-slot run",
    )


def _ideal_mark(ax: Axes, judgement: SweepJudgement) -> None:
    chosen = judgement.verdict_for(judgement.ideal)
    if chosen is None or not chosen.qualifies:
        return
    ax.plot(
        [chosen.slots],
        [chosen.metrics.turns_per_hour],
        marker="*",
        markersize=18,
        color=IDEAL_COLOUR,
        linestyle="none",
        label=f"ideal N = {chosen.slots}",
        zorder=5,
    )


def _ideal_line(ax: Axes, judgement: SweepJudgement, label: bool = True) -> None:
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


def throughput_figure(
    judgement: SweepJudgement, title: str, min_gain: float | None = None
) -> Figure:
    verdicts = judgement.verdicts
    figure, (turns_ax, tokens_ax) = figure_for(2, 6.5, f"Throughput against slots — {title}")
    turns = [v.metrics.turns_per_hour for v in verdicts]
    tokens = [v.metrics.output_tokens_per_s for v in verdicts]
    _one_slot_band(turns_ax, verdicts, turns)
    _points(turns_ax, verdicts, list(turns), "served turns per hour", hollow=True)
    confidence = next((v.confidence for v in verdicts if v.confidence), None)
    _intervals(turns_ax, verdicts, confidence)
    _gain_line(turns_ax, judgement, min_gain)
    _ideal_mark(turns_ax, judgement)
    _ideal_line(turns_ax, judgement, label=False)
    _ideal_line(tokens_ax, judgement)
    turns_ax.set_ylabel("served turns per hour (turns/h)")
    turns_ax.set_ylim(bottom=0)
    _broken_legend(turns_ax, verdicts, hollow=True)
    _one_slot_band(tokens_ax, verdicts, tokens)
    _points(tokens_ax, verdicts, list(tokens), "output tokens per second", marker="s")
    tokens_ax.set_ylabel("output tokens per second (tok/s)")
    tokens_ax.set_ylim(bottom=0)
    _broken_legend(tokens_ax, verdicts)
    _slot_ticks(tokens_ax, verdicts)
    return figure


def latency_figure(judgement: SweepJudgement, title: str) -> Figure:
    verdicts = judgement.verdicts
    figure, (ax,) = figure_for(1, 4.5, f"Latency per served turn against slots — {title}")
    _points(ax, verdicts, [v.metrics.p50_s for v in verdicts], "p50 (median)")
    _points(ax, verdicts, [v.metrics.p95_s for v in verdicts], "p95", marker="^")
    _ideal_line(ax, judgement)
    ax.set_ylabel("latency per turn (s)")
    ax.set_ylim(bottom=0)
    _broken_legend(ax, verdicts)
    _slot_ticks(ax, verdicts)
    return figure


def fidelity_figure(judgement: SweepJudgement, bounds: Bounds, title: str) -> Figure:
    compared = [v for v in judgement.verdicts if v.agreement is not None]
    figure, (ax,) = figure_for(1, 4.5, f"Agreement with the first one-slot run — {title}")
    structural = [v.agreement.structural if v.agreement else None for v in compared]
    exact = [v.agreement.exact if v.agreement else None for v in compared]
    threshold = judgement.figures.baseline.fidelity_threshold(bounds)
    ax.axhline(
        threshold,
        color=LIMIT_COLOUR,
        linestyle="--",
        linewidth=1.2,
        label=f"structural threshold {threshold:.3f}: structural stays above "
        f"(self-agreement − {bounds.fidelity_tolerance:g})",
    )
    if compared:
        _points(ax, compared, structural, "structural (tool calls and argument names)", "o", -0.03)
        _points(ax, compared, exact, "exact (identical text): reported, not a bound", "s", 0.03)
    else:
        ax.text(
            0.5,
            0.5,
            "no step was compared with the first one-slot run",
            ha="center",
            transform=ax.transAxes,
        )
    _ideal_line(ax, judgement)
    ax.set_ylabel("agreement (share of turns served in both, 0–1)")
    ax.set_ylim(-0.02, 1.05)
    _broken_legend(ax, compared)
    _slot_ticks(ax, compared or judgement.verdicts)
    return figure


MATPLOTLIB_HOME_ENV = "MPLCONFIGDIR"


def keep_matplotlib_under_state(environ: MutableMapping[str, str] | None = None) -> None:
    """Point matplotlib's config and font cache at `<state>/cache/matplotlib` (0700) before it
    is first imported, so a report writes nothing under the home folder. A folder the user
    chose with MPLCONFIGDIR is kept."""
    from ...state import StateLayout

    env = os.environ if environ is None else environ
    if env.get(MATPLOTLIB_HOME_ENV):
        return
    folder = ensure_private_dir(StateLayout.from_env(env).cache / "matplotlib")
    env[MATPLOTLIB_HOME_ENV] = str(folder)


def build_figures(
    evidence: Evidence, judgement: SweepJudgement, bounds: Bounds
) -> dict[str, Figure]:
    """Every plot of the report, by name (see PLOT_NAMES), as matplotlib Figures."""
    keep_matplotlib_under_state()
    names = [row[0] for row in step_rows(evidence.steps, judgement)]
    title = plot_title(evidence)
    return {
        "throughput": throughput_figure(judgement, title, bounds.min_gain),
        "latency": latency_figure(judgement, title),
        "memory": memory_figure(evidence, judgement, bounds, names, title),
        "fidelity": fidelity_figure(judgement, bounds, title),
    }


PLOTS_MISSING = (
    "No plots: this install leaves out matplotlib. To get them: "
    "pip install 'vibey-gh[plots]' (or pipx inject vibey-gh matplotlib), then "
    "vibey-gh slots show --report."
)


def plot_title(evidence: Evidence) -> str:
    """What was measured, for people: model, runner, device and window (the fingerprint's
    hash says none of it)."""
    fields = evidence.fingerprint_fields
    runner = evidence.document.runner
    model = runner.get("model") if isinstance(runner, dict) else None
    accelerators = fields.get("accelerators") or []
    device = fields.get("hardware_model") or fields.get("processor") or "an unnamed device"
    if accelerators and isinstance(accelerators, list):
        device += f" + {accelerators[0]}" if isinstance(accelerators[0], str) else ""
    kind, version = fields.get("runner_kind") or "runner", fields.get("runner_version") or ""
    # "simulated 0.1.0" already names its kind: no "simulated simulated 0.1.0"
    runner_text = version if str(version).startswith(str(kind)) else f"{kind} {version}".strip()
    name = _short_model(model) if model else "model " + str(fields.get("model_digest", ""))[:12]
    return f"{name} on {runner_text}, {device}, window {fields.get('window')}"


TITLE_PART = 48  # characters of a model's name worth a title


def _short_model(model: str) -> str:
    """A model file's name without its folders (a full path is cut at the plot's edges)."""
    name = model.replace("\\", "/").rsplit("/", 1)[-1]
    return name if len(name) <= TITLE_PART else name[: TITLE_PART - 1] + "…"


def plots_available(find_module: Callable[[str], object] | None = None) -> bool:
    """Whether matplotlib is installed (the `plots` extra); the light install leaves it out."""
    import importlib.util

    return (find_module or importlib.util.find_spec)("matplotlib") is not None


def figure_png(figure: Figure) -> bytes:
    """The figure as PNG bytes; no software tag, so the same figure gives the same bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def write_plots(
    evidence: Evidence, judgement: SweepJudgement, bounds: Bounds, folder: Path, stem: str
) -> list[Path]:
    """Render every plot and write `<stem>-<name>.png` atomically; return the paths."""
    written = []
    for name, figure in build_figures(evidence, judgement, bounds).items():
        path = folder / f"{stem}-{name}.png"
        atomic_write_bytes(path, figure_png(figure))
        written.append(path)
    return written


__all__ = [
    "PLOTS_MISSING",
    "PLOT_AXES",
    "PLOT_NAMES",
    "SweepTimeline",
    "build_figures",
    "figure_png",
    "fidelity_figure",
    "keep_matplotlib_under_state",
    "latency_figure",
    "memory_figure",
    "plot_title",
    "plots_available",
    "sweep_timeline",
    "throughput_figure",
    "write_plots",
]
