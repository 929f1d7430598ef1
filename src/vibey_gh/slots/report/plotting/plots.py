"""PNG plots for the evidence report (matplotlib, headless).

matplotlib is imported inside the functions that draw: `slots allowed` imports the slots
package on every decision and must not pay for it. Figures are built as bare
`matplotlib.figure.Figure` objects (no pyplot, so no global state and no GUI backend) and
rendered to PNG bytes with the Agg canvas, then written atomically.
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ....files import atomic_write_bytes, ensure_private_dir
from ....interfaces.bounds import Bounds
from ....state import StateLayout
from ...evidence.store import Evidence
from ...judging.judge import SweepJudgement, Verdict
from ...judging.metrics import MB
from ...judging.records import TIMELINE_FIELDS, StepRecord
from ...judging.step_findings import GB
from ..tables.step_table import step_rows
from .latency_plot import latency_figure
from .plot_parts import (
    BAND_COLOUR,
    BROKEN_COLOUR,
    DPI,
    IDEAL_COLOUR,
    LIMIT_COLOUR,
    breaks,
    breaks_none,
    broken_legend,
    ideal_line,
    new_figure,
    plot_title,
    points,
    slot_ticks,
)
from .speed_plot import generation_points

FIDELITY = breaks("fidelity")

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


PLOT_NAMES = ("throughput", "latency", "memory", "fidelity")
# How many axes each figure has: the tests check it, readers rely on the layout.
PLOT_AXES = {"throughput": 2, "latency": 2, "memory": 3, "fidelity": 1}
NAN = math.nan

_T, _WIRED, _USED, _FREE, _SWAP_OUT, _RSS, _GPU = (
    TIMELINE_FIELDS.index(name)
    for name in (
        "t",
        "wired_bytes",
        "used_bytes",
        "free_share",
        "swap_out_bytes",
        "runner_rss_bytes",
        "gpu_used_share",
    )
)


@dataclass
class SweepTimeline:
    """Every step's samples on one axis: seconds of replay, steps laid end to end.

    Replay time rather than wall time: loads between steps and a sweep resumed after a reboot
    would otherwise leave gaps that hide what each step did. None readings become NaN so the
    lines break where a reading is missing.
    """

    x: list[float] = field(default_factory=list)
    wired_gb: list[float] = field(default_factory=list)
    used_gb: list[float] = field(default_factory=list)
    runner_rss_gb: list[float] = field(default_factory=list)
    free_pct: list[float] = field(default_factory=list)
    gpu_pct: list[float] = field(default_factory=list)
    swap_out_mb_per_min: list[float] = field(default_factory=list)
    steps: list[tuple[float, float, str, float | None]] = field(default_factory=list)


def _reading(point: Sequence[float | None], index: int, scale: float) -> float:
    value = point[index] if len(point) > index else None
    return NAN if value is None else float(value) / scale


def sweep_timeline(
    steps: Sequence[StepRecord], names: Sequence[str], ceiling: float
) -> SweepTimeline:
    """Lay the steps' 1 Hz samples end to end; `steps` holds (start, end, name, ceiling GB)."""
    line = SweepTimeline()
    offset = 0.0
    for step, name in zip(steps, names, strict=True):
        points = [p for p in step.timeline if len(p) > _T and p[_T] is not None]
        first = float(points[0][_T] or 0.0) if points else 0.0
        previous: tuple[float, float] | None = None
        for point in points:
            t = float(point[_T] or 0.0) - first
            line.x.append(offset + t)
            line.wired_gb.append(_reading(point, _WIRED, GB))
            line.used_gb.append(_reading(point, _USED, GB))
            line.runner_rss_gb.append(_reading(point, _RSS, GB))
            line.free_pct.append(_reading(point, _FREE, 0.01))
            line.gpu_pct.append(_reading(point, _GPU, 0.01))
            swapped = _reading(point, _SWAP_OUT, MB)
            rate = NAN
            if previous is not None and t > previous[0] and not math.isnan(swapped):
                rate = max(0.0, swapped - previous[1]) / ((t - previous[0]) / 60.0)
            line.swap_out_mb_per_min.append(rate)
            previous = (t, swapped) if not math.isnan(swapped) else previous
        span = float(points[-1][_T] or 0.0) - first if points else 0.0
        budget = step.memory_budget_bytes
        line.steps.append((offset, offset + span, name, ceiling * budget / GB if budget else None))
        offset += span
    return line


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


def _intervals(ax: Axes, verdicts: Sequence[Verdict], confidence: float | None) -> None:
    """Each step's interval of the deciding figure as an error bar."""
    shown = [v for v in verdicts if math.isfinite(v.rate_high) and v.rate_high > v.rate_low]
    if not shown:
        return
    ax.errorbar(
        [v.slots for v in shown],
        [v.metrics.rate for v in shown],
        yerr=[
            [v.metrics.rate - v.rate_low for v in shown],
            [v.rate_high - v.metrics.rate for v in shown],
        ],
        fmt="none",
        ecolor="black",
        elinewidth=1.0,
        capsize=4,
        label=f"{confidence:.0%} interval" if confidence else "interval",
    )


def _gain_line(ax: Axes, judgement: SweepJudgement, min_gain: float | None) -> None:
    best = judgement.figures.baseline.best_rate
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
        [chosen.metrics.rate],
        marker="*",
        markersize=18,
        color=IDEAL_COLOUR,
        linestyle="none",
        label=f"ideal N = {chosen.slots}",
        zorder=5,
    )


def throughput_figure(
    judgement: SweepJudgement, title: str, min_gain: float | None = None
) -> Figure:
    verdicts = judgement.verdicts
    decided_by = judgement.figures.decided_by
    figure, (turns_ax, tokens_ax) = new_figure(2, 6.5, f"Throughput against slots — {title}")
    turns = [v.metrics.rate for v in verdicts]
    tokens = [v.metrics.output_tokens_per_s for v in verdicts]
    # the figure the sweep was decided on: the axis says which
    what = "completed runs per hour" if decided_by == "runs/h" else "served turns per hour"
    _one_slot_band(turns_ax, verdicts, turns)
    points(turns_ax, verdicts, list(turns), what, hollow=True)
    confidence = next((v.confidence for v in verdicts if v.confidence), None)
    _intervals(turns_ax, verdicts, confidence)
    _gain_line(turns_ax, judgement, min_gain)
    _ideal_mark(turns_ax, judgement)
    ideal_line(turns_ax, judgement, label=False)
    ideal_line(tokens_ax, judgement)
    turns_ax.set_ylabel(f"{what} ({decided_by})")
    turns_ax.set_ylim(bottom=0)
    broken_legend(turns_ax, verdicts, hollow=True)
    _one_slot_band(tokens_ax, verdicts, tokens)
    points(tokens_ax, verdicts, list(tokens), "output tokens per second", marker="s")
    generation_points(tokens_ax, judgement)
    tokens_ax.set_ylabel("output tokens per second (tok/s)")
    tokens_ax.set_ylim(bottom=0)
    broken_legend(tokens_ax, verdicts)
    slot_ticks(tokens_ax, verdicts)
    return figure


def fidelity_figure(judgement: SweepJudgement, bounds: Bounds, title: str) -> Figure:
    compared = [v for v in judgement.verdicts if v.agreement is not None]
    figure, (ax,) = new_figure(1, 4.5, f"Agreement with the first one-slot run — {title}")
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
        structural_label = "structural (tool calls and argument names)"
        points(ax, compared, structural, structural_label, "o", -0.03, broke=FIDELITY)
        exact_label = "exact (identical text): reported, not a bound"
        points(ax, compared, exact, exact_label, "s", 0.03, broke=breaks_none)
    else:
        ax.text(
            0.5,
            0.5,
            "no step was compared with the first one-slot run",
            ha="center",
            transform=ax.transAxes,
        )
    ideal_line(ax, judgement)
    ax.set_ylabel("agreement (share of turns served in both, 0–1)")
    ax.set_ylim(-0.02, 1.05)
    broken_legend(ax, compared, broke=FIDELITY, what="the fidelity bound")
    slot_ticks(ax, compared or judgement.verdicts)
    return figure


def _limit_segments(
    ax: Axes, spans: Sequence[tuple[float, float, float | None]], label: str
) -> None:
    """Dashed limit lines over the steps they apply to (value None: none), labelled once."""
    labelled = False
    for start, end, value in spans:
        if value is None:
            continue
        ax.hlines(
            value,
            start,
            max(end, start + 1.0),
            colors=BROKEN_COLOUR,
            linestyles="--",
            label="_nolegend_" if labelled else label,
        )
        labelled = True


def memory_figure(
    evidence: Evidence, judgement: SweepJudgement, bounds: Bounds, names: Sequence[str], title: str
) -> Figure:
    line = sweep_timeline(evidence.steps, names, bounds.wired_ceiling)
    figure, (memory_ax, free_ax, swap_ax) = new_figure(
        3, 9.0, f"Memory across the sweep — {title}", width=11.5
    )
    memory_ax.plot(line.x, line.wired_gb, label="wired (macOS) / in use (Linux)", linewidth=1.3)
    if any(
        not math.isnan(u) and not math.isnan(w) and abs(u - w) > 1e-3
        for u, w in zip(line.used_gb, line.wired_gb, strict=True)
    ):
        memory_ax.plot(line.x, line.used_gb, label="used", linewidth=1.0)
    if any(not math.isnan(r) for r in line.runner_rss_gb):
        memory_ax.plot(line.x, line.runner_rss_gb, label="runner resident set", linewidth=1.0)
    ideal = judgement.verdict_for(judgement.ideal)
    for (start, end, _, _), step in zip(line.steps, evidence.steps, strict=True):
        if ideal is not None and ideal.qualifies and ideal.index == step.index:
            memory_ax.axvspan(
                start, end, color=IDEAL_COLOUR, alpha=0.2, label=f"ideal N = {ideal.slots}"
            )
    _limit_segments(
        memory_ax,
        [(start, end, ceiling) for start, end, _, ceiling in line.steps],
        f"ceiling ({bounds.wired_ceiling:.0%} of memory)",
    )
    memory_ax.set_ylabel("memory (GB)")
    memory_ax.set_ylim(bottom=0)
    free_ax.plot(line.x, line.free_pct, label="free share", color="tab:green", linewidth=1.3)
    if any(not math.isnan(g) for g in line.gpu_pct):
        free_ax.plot(
            line.x, line.gpu_pct, label="GPU memory used", color="tab:purple", linewidth=1.0
        )
    free_ax.set_ylabel("share of memory (%)")
    free_ax.set_ylim(0, 100)
    swap_ax.plot(
        line.x, line.swap_out_mb_per_min, label="swap-out rate", color="tab:orange", linewidth=1.3
    )
    limit = judgement.figures.baseline.swap_limit(bounds)
    _limit_segments(
        swap_ax,
        [
            (start, end, limit if step.slots > 1 else None)
            for (start, end, _, _), step in zip(line.steps, evidence.steps, strict=True)
        ],
        "swap-out limit (more than one slot)",
    )
    swap_ax.set_ylabel("swap-out (MB/min)")
    swap_ax.set_ylim(bottom=0)
    swap_ax.set_xlabel("replay time across the sweep, steps end to end (s)")
    for ax in (memory_ax, free_ax, swap_ax):
        for start, _, _, _ in line.steps[1:]:
            ax.axvline(start, color="black", linewidth=0.8, alpha=0.6)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for start, end, name, _ in line.steps:
        memory_ax.text(
            (start + end) / 2,
            1.02,
            name,
            ha="center",
            va="bottom",
            fontsize=9,
            transform=memory_ax.get_xaxis_transform(),
        )
    return figure


MATPLOTLIB_HOME_ENV = "MPLCONFIGDIR"


def keep_matplotlib_under_state(environ: MutableMapping[str, str] | None = None) -> None:
    """Point matplotlib's config and font cache at `<state>/cache/matplotlib` (0700) before it
    is first imported, so a report writes nothing under the home folder. A folder the user
    chose with MPLCONFIGDIR is kept."""
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
        "latency": latency_figure(judgement, title, bounds),
        "memory": memory_figure(evidence, judgement, bounds, names, title),
        "fidelity": fidelity_figure(judgement, bounds, title),
    }


PLOTS_MISSING = (
    "No plots: this install leaves out matplotlib. To get them: "
    "pip install 'vibey-gh[plots]' (or pipx inject vibey-gh matplotlib), then "
    "vibey-gh slots show --report."
)


def plots_available(find_module: Callable[[str], object] | None = None) -> bool:
    """Whether matplotlib is installed (the `plots` extra); the light install leaves it out."""
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
