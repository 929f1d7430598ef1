"""The sweep as a generator: it yields the next slot count and receives that step's record.

Steps are N = 1, 1, 2, 3, … (or an explicit list). The sweep stops at the first step above one
slot that breaks a bound, or after `patience` consecutive steps that gain less than `min_gain`
over the best throughput so far. A step counts as such only when its whole throughput
interval is below that bar (see `gain_over_best`); one whose
interval clears it resets the count, and one whose interval straddles it (inconclusive) leaves
the count as it was. Bounds are re-read (through
`bounds_now`) at every decision. Each step is judged once, here: its verdict goes to
`on_verdict` (the progress line says it), so no caller judges the step again.
Completed steps from a checkpoint are fed in exactly like fresh ones, so a resumed sweep makes
the same decisions as an uninterrupted one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence

from .bounds import Bounds
from .figures import StepMetrics
from .judge import Verdict, judge_sweep
from .metrics import step_metrics
from .records import StepRecord
from .statistics.knee import adds_less_than, climbs
from .statistics.stats import Estimate, ratio_interval

DEFAULT_MAX_SLOTS = 16


def gain_over_best(
    verdict: Verdict, best_before: StepMetrics | None, confidence: float
) -> tuple[float, float] | None:
    """Interval of a step's throughput over the best throughput before it; None when too few
    turns tell nothing. With nothing served before, any step is a gain.

    Only the step's own noise counts here, not the best step's: this rule decides whether to
    measure on (a cost), not a recorded verdict, and measuring the new step longer cannot
    narrow an earlier step's interval — with both noises a plateau after a briefly measured
    best step stays undecided to the cap, step after step, and the sweep never stops."""
    if best_before is None or best_before.rate <= 0:
        return math.inf, math.inf
    if verdict.metrics.window_start is not None and not verdict.metrics.has_interval:
        return None
    return ratio_interval(verdict.metrics.throughput, Estimate(best_before.rate), confidence)


def default_order(index: int) -> int:
    """1, 1, 2, 3, …: one slot twice (the fidelity and noise baseline), then one more each step."""
    return 1 if index < 2 else index


def sweep_steps(
    bounds_now: Callable[[], Bounds],
    explicit: Sequence[int] | None = None,
    max_slots: int = DEFAULT_MAX_SLOTS,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> Generator[int, StepRecord, str]:
    """Yield slot counts; `send` each step's record back; the return value says why it stopped.
    `on_verdict` hears each step's verdict as soon as it is judged, before the sweep moves on."""
    steps: list[StepRecord] = []
    strikes = 0
    index = 0
    while True:
        if explicit is not None:
            if index >= len(explicit):
                return "every requested step was measured"
            slots = explicit[index]
        else:
            slots = default_order(index)
            if slots > max_slots:
                return f"reached the largest slot count to try ({max_slots})"
        step = yield slots
        index += 1
        best_before = max((step_metrics(s) for s in steps), key=lambda m: m.rate, default=None)
        steps.append(step)
        bounds = bounds_now()
        verdict = judge_sweep(steps, bounds).verdicts[-1]
        if on_verdict is not None:
            on_verdict(verdict)
        if slots <= 1:
            continue
        if not verdict.inside_bounds:
            return f"stopped at {slots} slots: {verdict.broken[0]}"
        over_best = gain_over_best(verdict, best_before, bounds.confidence)
        # the knee rule's own tests: a step patience stops on is never the answer, and the
        # step that resets the count is one the answer may be
        if over_best is not None and best_before is not None:
            best = best_before.rate
            throughput = verdict.metrics.throughput
            if adds_less_than(throughput, best, bounds.min_gain, bounds.confidence):
                strikes += 1
            elif climbs(throughput, best, bounds.min_gain, bounds.confidence):
                strikes = 0
        if strikes >= bounds.patience:
            return (
                f"stopped after {strikes} steps without a {bounds.min_gain:.0%} gain "
                "over the best throughput so far"
            )
