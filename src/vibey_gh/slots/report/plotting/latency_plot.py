"""The latency plot: turn latency and time to first token against N, p50 and p95 with each
p95's distribution-free interval, the configured limit and the ideal N marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ....interfaces.bounds import Bounds
from ...judging.judge import SweepJudgement, Verdict
from . import plot_parts as parts

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ...judging.latencies.latency_figures import QuantileSample


def latency_figure(judgement: SweepJudgement, title: str, bounds: Bounds | None = None) -> Figure:
    """Turn latency (top) and time to first token (bottom), p50 and p95 against N, with each
    p95's interval, the configured limits and the ideal N marked."""
    verdicts = judgement.verdicts
    figure, (turn_ax, ttft_ax) = parts.new_figure(2, 6.5, f"Latency against slots — {title}")
    confidence = bounds.confidence if bounds else 0.9
    turn = [v.latency.latency if v.latency else None for v in verdicts]
    ttft = [v.latency.ttft if v.latency else None for v in verdicts]
    # a p95 point is crossed only where its own bound broke; a p50 is no bound
    turn_bound, ttft_bound = parts.breaks("latency_factor"), parts.breaks("ttft_p95_seconds")
    for ax, samples, p50s, what, bound in (
        (turn_ax, turn, [v.metrics.p50_s for v in verdicts], "turn", turn_bound),
        (ttft_ax, ttft, [v.latency.ttft_p50_s if v.latency else None for v in verdicts], "TTFT",
         ttft_bound),
    ):  # fmt: skip
        parts.points(ax, verdicts, p50s, f"{what} p50 (median)", broke=parts.breaks_none)
        p95s = [s.value() if s else None for s in samples]
        parts.points(ax, verdicts, p95s, f"{what} p95", "^", broke=bound)
        _p95_bars(ax, verdicts, samples, confidence)
        parts.ideal_line(ax, judgement)
    if bounds is not None and bounds.ttft_p95_seconds is not None:
        ttft_ax.axhline(bounds.ttft_p95_seconds, color=parts.LIMIT_COLOUR, linestyle="--",
                        label=f"ttft_p95_seconds {bounds.ttft_p95_seconds:g} s")  # fmt: skip
    turn_ax.set_ylabel("latency per turn (s)")
    ttft_ax.set_ylabel("time to first token (s)")
    for ax, bound in ((turn_ax, turn_bound), (ttft_ax, ttft_bound)):
        ax.set_ylim(bottom=0)
        parts.broken_legend(ax, verdicts, broke=bound, what="its latency bound")
    parts.slot_ticks(ttft_ax, verdicts)
    return figure


def _p95_bars(
    ax: Axes, verdicts: Sequence[Verdict], samples: Sequence[QuantileSample | None], level: float
) -> None:
    """Each p95's distribution-free interval as an error bar (where both ends are bounded)."""
    xs, ys, below, above = [], [], [], []
    for verdict, sample in zip(verdicts, samples, strict=True):
        point = sample.value() if sample else None
        low, high = sample.interval(level) if sample else (None, None)
        if point is not None and low is not None and high is not None:
            xs.append(verdict.slots)
            ys.append(point)
            below.append(point - low)
            above.append(high - point)
    if xs:
        ax.errorbar(xs, ys, yerr=[below, above], fmt="none", ecolor=parts.BAND_COLOUR, capsize=3,
                    label=f"p95 {level:.0%} interval")  # fmt: skip
