"""The sweep as a generator: it yields the next slot count and receives that step's record.

Steps are N = 1, 1, 2, 3, … (or an explicit list). The sweep stops at the first step above one
slot that breaks a bound, or after `patience` consecutive steps that gain less than `min_gain`
over the best throughput so far. A step counts as such only when its whole throughput interval
is below that bar; one whose interval clears it resets the count, and one whose interval
straddles it (inconclusive) leaves the count as it was. Bounds are re-read (through
`bounds_now`) at every decision.
Completed steps from a checkpoint are fed in exactly like fresh ones, so a resumed sweep makes
the same decisions as an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence

from .bounds import Bounds
from .judge import judge_sweep
from .metrics import step_metrics
from .records import StepRecord

DEFAULT_MAX_SLOTS = 16


def default_order(index: int) -> int:
    """1, 1, 2, 3, …: one slot twice (the fidelity and noise baseline), then one more each step."""
    return 1 if index < 2 else index


def sweep_steps(
    bounds_now: Callable[[], Bounds],
    explicit: Sequence[int] | None = None,
    max_slots: int = DEFAULT_MAX_SLOTS,
) -> Generator[int, StepRecord, str]:
    """Yield slot counts; `send` each step's record back; the return value says why it stopped."""
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
        best_before = max((step_metrics(s).turns_per_hour for s in steps), default=0.0)
        steps.append(step)
        bounds = bounds_now()
        verdict = judge_sweep(steps, bounds).verdicts[-1]
        if slots <= 1:
            continue
        if not verdict.inside_bounds:
            return f"stopped at {slots} slots: {verdict.broken[0]}"
        bar = (1.0 + bounds.min_gain) * best_before
        if verdict.turns_per_hour_high < bar:
            strikes += 1
        elif verdict.turns_per_hour_low >= bar:
            strikes = 0
        if strikes >= bounds.patience:
            return (
                f"stopped after {strikes} steps without a {bounds.min_gain:.0%} gain "
                "over the best throughput so far"
            )
