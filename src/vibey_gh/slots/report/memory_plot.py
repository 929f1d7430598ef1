"""The memory plot: every step's 1 Hz samples laid end to end, with the limits that apply."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..evidence.store import Evidence
from ..judging.bounds import Bounds
from ..judging.judge import GB, SweepJudgement
from ..judging.metrics import MB
from ..judging.records import TIMELINE_FIELDS, StepRecord
from .plot_style import BROKEN_COLOUR, IDEAL_COLOUR, figure_for

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

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
    figure, (memory_ax, free_ax, swap_ax) = figure_for(
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


__all__ = ["SweepTimeline", "memory_figure", "sweep_timeline"]
