"""How long the next steps will take, from the rule that ends a step and the steps measured.

A step replays until every corpus turn was served once (one pass) *and* its measurement window
said enough (at least `min_step_seconds`, longer while undecided, up to `max_step_seconds`),
then drains the segments in flight. So a step at N takes

    overhead + max(pass(N), ramp(N) + window(N)) + drain(N)

where the overhead (runner start, model load, stop) is as measured so far; the window as the
latest step's of its kind (a one-slot bar, or a step judged against bars) within the caps; and
the pass, ramp and drain scale with a turn's cost at N. A turn's cost (worker-seconds per
served turn) at N is the latest step's scaled by (N / n)^α: α = 0 where throughput grows with
the slots (a pass at 2 slots takes half as long), α = 1 on a saturated runner (it takes as
long). Two slot counts measured give α; before that it is unknown, so the estimate takes the
middle (½) and its range both ends. A window is held past its minimum by an interval still
undecided, which depends on the noise the step meets: the range reaches down to the minimum.
Nothing here is a bound or a verdict: only what the progress lines print, checked against the
real durations by bench/estimates.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from ..judging.records import StepRecord

# α before two slot counts were measured: the middle of "scales" and "saturated"
UNKNOWN_ALPHA = 0.5
ALPHA_RANGE = (0.0, 1.0)


class MeasuredStep(msgspec.Struct, frozen=True):
    """What a finished step says about the next ones (seconds; relative to its replay start).

    took_s: the whole step, runner start to stop. replay_s: first turn sent to last answered.
    covered_s: until every corpus turn had its first answer (the pass). window: the
    measurement window (start, end), None without one. served: turns served in all."""

    slots: int
    took_s: float
    replay_s: float
    covered_s: float
    window: tuple[float, float] | None
    served: int

    @property
    def turn_cost_s(self) -> float:
        """Worker-seconds per served turn over the whole replay."""
        return self.slots * self.replay_s / self.served if self.served else math.inf

    @property
    def window_s(self) -> float | None:
        return None if self.window is None else self.window[1] - self.window[0]


def measured_step(step: StepRecord, took_s: float) -> MeasuredStep | None:
    """The figures of a finished step; None when it served nothing (nothing to scale)."""
    turns = step.turns
    if not turns:
        return None
    start = min(t.result.started for t in turns)
    end = max(t.result.ended for t in turns)
    first: dict[str, float] = {}
    for turn in turns:
        seen = first.get(turn.turn_id)
        first[turn.turn_id] = turn.result.ended if seen is None else min(seen, turn.result.ended)
    measurement = step.measurement or {}
    low, high = measurement.get("start"), measurement.get("end")
    window = (
        (float(low) - start, float(high) - start)
        if isinstance(low, int | float) and isinstance(high, int | float)
        else None
    )
    served = sum(1 for t in turns if t.result.served)
    if served == 0:
        return None
    return MeasuredStep(
        slots=step.slots,
        took_s=max(took_s, end - start),
        replay_s=end - start,
        covered_s=max(first.values()) - start,
        window=window,
        served=served,
    )


def cost_exponent(measured: Sequence[MeasuredStep]) -> float | None:
    """α from the latest two slot counts measured; None with fewer than two."""
    latest: dict[int, MeasuredStep] = {}
    for step in measured:
        latest[step.slots] = step
    if len(latest) < 2:
        return None
    order = [s.slots for s in measured]
    counts = sorted(latest, key=lambda n: max(i for i, s in enumerate(order) if s == n))[-2:]
    a, b = latest[counts[0]], latest[counts[1]]
    if not (math.isfinite(a.turn_cost_s) and math.isfinite(b.turn_cost_s)):
        return None
    alpha = math.log(b.turn_cost_s / a.turn_cost_s) / math.log(b.slots / a.slots)
    return min(max(alpha, ALPHA_RANGE[0]), ALPHA_RANGE[1])


class StepEstimate(msgspec.Struct, frozen=True):
    """Seconds a step at N is expected to take: `likely`, within `low`–`high` (α's range
    while it is unknown). pass_held: one pass over the corpus, not the window, ends it."""

    likely: float
    low: float
    high: float
    pass_held: bool


def estimate_step(
    measured: Sequence[MeasuredStep], slots: int, min_step_s: float, max_step_s: float
) -> StepEstimate | None:
    """The step at `slots`, from the steps measured (None before the first)."""
    if not measured:
        return None
    overhead = sum(max(0.0, m.took_s - m.replay_s) for m in measured) / len(measured)
    reference = measured[-1]
    known = cost_exponent(measured)
    alphas = (known, known, known) if known is not None else (0.0, UNKNOWN_ALPHA, 1.0)
    window = _window_for(measured, slots, min_step_s, max_step_s)
    seconds = [_replay_at(reference, slots, alpha, window) for alpha in alphas if alpha is not None]
    # a window measured past the minimum was held by an undecided interval, and how long the
    # next one is held depends on the noise it meets: it may end at the minimum
    seconds.append(_replay_at(reference, slots, alphas[0] or 0.0, min_step_s))
    likely_replay, likely_held = seconds[1]
    return StepEstimate(
        likely=overhead + likely_replay,
        low=overhead + min(s for s, _ in seconds),
        high=overhead + max(s for s, _ in seconds),
        pass_held=likely_held,
    )


def _window_for(
    measured: Sequence[MeasuredStep], slots: int, min_step_s: float, max_step_s: float
) -> float:
    """The window a step at `slots` is expected to measure: the latest of its kind (one-slot
    bars are measured until narrow, later steps until decided), else the latest at all."""
    kind = [m for m in measured if (m.slots <= 1) == (slots <= 1) and m.window_s is not None]
    any_kind = [m for m in measured if m.window_s is not None]
    source = kind or any_kind
    seconds = source[-1].window_s if source else None
    return min(max(seconds if seconds is not None else min_step_s, min_step_s), max_step_s)


def _replay_at(ref: MeasuredStep, slots: int, alpha: float, window_s: float) -> tuple[float, bool]:
    """Seconds of replay at `slots` scaled from `ref`, and whether the pass holds it."""
    turn = (slots / ref.slots) ** alpha  # a turn's cost at `slots`, relative to ref's
    per_pass = turn * ref.slots / slots  # a pass's time, relative
    ramp = ref.window[0] if ref.window is not None else 0.0
    window_end = ref.window[1] if ref.window is not None else ref.covered_s
    drain = max(0.0, ref.replay_s - max(ref.covered_s, window_end))
    covered = ref.covered_s * per_pass
    measured_until = ramp * turn + window_s
    return max(covered, measured_until) + drain * turn, covered > measured_until


def planned_slots(explicit: Sequence[int] | None, max_slots: int, done: int) -> list[int]:
    """The slot counts of the steps the sweep may still take, in order."""
    if explicit is not None:
        return list(explicit[done:])
    return [1 if index < 2 else index for index in range(done, max_slots + 1)]


def fewest_steps_left(explicit: Sequence[int] | None, done: int, patience: int, streak: int) -> int:
    """Steps the sweep takes at least unless a step breaks a bound: the one-slot runs still to
    come first (they never count towards patience), then `patience` steps without a gain,
    fewer by the `streak` of such steps already measured."""
    order = list(explicit[done:]) if explicit is not None else [1] * max(0, 2 - done)
    ones = 0
    while ones < len(order) and order[ones] <= 1:
        ones += 1
    fewest = ones + max(1, patience - streak)
    return min(fewest, len(order)) if explicit is not None else fewest


def sweep_left(
    measured: Sequence[MeasuredStep],
    explicit: Sequence[int] | None,
    max_slots: int,
    done: int,
    min_step_s: float,
    max_step_s: float,
    patience: int = 2,
    streak: int = 0,
) -> tuple[float, float] | None:
    """Seconds the sweep has left: at least its fewest steps (each at its low estimate), at
    most every step it may take (each at its high one). None before the first step."""
    plan = planned_slots(explicit, max_slots, done)
    if not plan:
        return 0.0, 0.0
    estimates = [estimate_step(measured, n, min_step_s, max_step_s) for n in plan]
    if any(e is None for e in estimates):
        return None
    known = [e for e in estimates if e is not None]
    fewest = fewest_steps_left(explicit, done, patience, streak)
    return sum(e.low for e in known[:fewest]), sum(e.high for e in known)


__all__ = [
    "MeasuredStep",
    "StepEstimate",
    "cost_exponent",
    "estimate_step",
    "fewest_steps_left",
    "measured_step",
    "planned_slots",
    "sweep_left",
]
