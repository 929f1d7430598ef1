"""tg on the throughput plot: each stream's generation speed by the runner's own timing,
mean ± sd per step (`runner_speed`), beside the step's total output tokens per second."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .plot_parts import breaks_none, points

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ...judging.judge import SweepJudgement

SHIFT = 0.08  # beside the total's markers, so neither hides the other


def generation_points(ax: Axes, judgement: SweepJudgement) -> None:
    """tg per stream with its sd as an error bar; nothing where no step has it (a runner
    that reports no timings, evidence from before they were kept)."""
    speeds = {figures.index: figures.speed for figures in judgement.figures.steps}
    rates = [speeds.get(v.index) for v in judgement.verdicts]
    means = [s.generation.mean if s is not None else None for s in rates]
    if all(mean is None for mean in means):
        return
    label = "tg per stream (runner's timing, mean ± sd)"
    points(ax, judgement.verdicts, means, label, marker="v", shift=SHIFT, broke=breaks_none)
    colour = ax.get_lines()[-1].get_color()
    for verdict, speed in zip(judgement.verdicts, rates, strict=True):
        if speed is None or speed.generation.mean is None or speed.generation.sd is None:
            continue
        ax.errorbar(
            [verdict.slots + SHIFT], [speed.generation.mean], yerr=[speed.generation.sd],
            fmt="none", color=colour, capsize=3, linewidth=1,
        )  # fmt: skip
