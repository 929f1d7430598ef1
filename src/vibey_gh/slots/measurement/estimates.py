"""How long the next steps will take, from the rule that ends a step and the steps measured.

A step replays until every corpus turn was served once (one pass) *and* its measurement window
said enough: it is looked at only at planned looks (`statistics.sequential.look_times`, from
`min_step_seconds` up to `max_step_seconds`, the cap) and stops at the first look that decides
it, at the cap at the latest, at the segment boundary after it; then it drains the segments in
flight. So a step at N takes

    overhead + max(pass(N), ramp(N) + window(N)) + drain(N)

where the overhead (runner start, model load, stop) is as measured so far; the window as the
latest step's of its kind (a one-slot bar, or a step judged against bars) within the caps; and
the pass, ramp and drain are the latest step's at the same N, else scale with a turn's cost at
N. A turn's cost (worker-seconds per served turn) at N is the latest step's scaled by
(N / n)^α: α = 0 where throughput grows with the slots (a pass at 2 slots takes half as long),
α = 1 on a saturated runner (it takes as long). Two slot counts measured give α; before that
it is unknown, so the estimate takes the middle (½) and its range both ends.

With `latency_factor` set, the one-slot runs before the steps are the reference each step's
turns are held against, and are measured on until they hold every turn `reference_repeats`
times between them (half each: `stepping.stopping`): their window lasts that many passes at
the least (within the cap), and a closing run, which stops at its first look, is not expected
to last as long as they did (`passes`).

The range is what the rule allows: at the low end the window ends at its first look (the
minimum, or half of it for an interleaved step), and the pass and the overhead run a tenth
faster than measured (a shared machine's noise); at the high end the window ends only at the
cap (an interval the noise keeps undecided is measured that long), past it to a segment
boundary (the longest overrun seen, a turn at least) and a drain of the turns in flight, with
the longest overhead seen and its spread once more; a pass that takes longer holds the step
past either. The sweep's time left is likewise the steps it takes at least (each at its low
end) to every step it may take, the closing one-slot run included (each at its high end): the
planner's steps are an input (`StepsAhead`), so a planner that orders them otherwise needs no
change here. Nothing here is a bound or a verdict: only what the progress lines print, checked
against the real durations by bench/estimates.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from ..judging.records import StepRecord
from ..judging.statistics.sequential import look_times
from ..judging.sweep import default_order

# α before two slot counts were measured: the middle of "scales" and "saturated"
UNKNOWN_ALPHA = 0.5
# how much faster (or slower) than measured the same step may run on a shared machine (its
# pass, its overhead): the low end allows for it, and the high end of a run that one pass
# ends (bench/estimates.py saw the same N again 3–6% faster, and a one-pass run 5% slower)
SAME_STEP_FASTER = 0.1
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
    measured: Sequence[MeasuredStep],
    slots: int,
    min_step_s: float,
    max_step_s: float,
    passes: int | None = None,
    one_pass: bool = False,
    even_looks_s: float | None = None,
    first_look_s: float | None = None,
) -> StepEstimate | None:
    """The step at `slots`, from the steps measured (None before the first). passes: a
    one-slot run measured until its window held every turn that many times (the reference of
    `latency_factor`: `reference_repeats` / 2; a closing run with it set, once); None: its
    window as the latest of its kind's. one_pass: a one-slot run that ends once it served the
    corpus (no step's bar, in a sweep that interleaves): neither the minimum nor a look
    holds it. even_looks_s: where the planned looks start doubling (`look_times`).
    first_look_s: a step above one slot's first look, where it comes before the minimum (an
    interleaved step's: `sequential.first_look`)."""
    if not measured:
        return None
    if one_pass:
        passes, min_step_s = 1, 0.0
    first = first_look_s if slots > 1 else None
    if first is not None:
        min_step_s = min(min_step_s, first)
    overheads = [max(0.0, m.took_s - m.replay_s) for m in measured]
    overhead = sum(overheads) / len(overheads)
    # the latest step at the same N says most of this one (the closing one-slot run after
    # N=4 is the one-slot runs again, not N=4 scaled back down); else the latest at all
    same = [m for m in measured if m.slots == slots]
    reference = same[-1] if same else measured[-1]
    known = cost_exponent(measured)
    alphas = (known, known, known) if known is not None else (0.0, UNKNOWN_ALPHA, 1.0)
    faster = 1.0 - SAME_STEP_FASTER

    def window_at(alpha: float, scale: float = 1.0) -> float:
        """The shortest window `passes` passes allow (within the cap), at least the minimum."""
        if passes is None:
            return min_step_s
        one_pass = reference.covered_s * math.pow(slots / reference.slots, alpha) * reference.slots
        return min(max(min_step_s, scale * passes * one_pass / slots), max_step_s)

    window = _window_for(measured, slots, min_step_s, max_step_s)
    if passes is not None:
        window = window_at(alphas[1])
    likely_replay, likely_held = _replay_at(reference, slots, alphas[1], window)
    # the window may end at its first look (the minimum, or what the passes it must hold
    # take), or only at the cap, past it by a segment: how long it is held depends on the
    # noise the step meets
    low = min(
        _replay_at(
            reference,
            slots,
            a,
            window_at(a, faster),
            pass_scale=faster,
            from_start=first is not None,  # its first look counts from its first block
        )[0]
        for a in alphas
    )
    past = overrun_s(measured, min_step_s, max_step_s, even_looks_s, first)
    slower = 1.0 + SAME_STEP_FASTER
    high = max(
        _replay_at(reference, slots, a, window_at(a, slower), pass_scale=slower)[0]
        if one_pass
        else _replay_at(reference, slots, a, max_step_s, past)[0]
        for a in alphas
    )
    # the overhead grows over a sweep (judging and saving every step so far after each one)
    # and with the load: the longest seen, and its spread once more
    most_overhead = max(overheads) + (max(overheads) - min(overheads))
    likely = overhead + likely_replay
    return StepEstimate(
        likely=likely,
        low=min(min(overheads) * faster + low, likely),
        high=max(most_overhead + high, likely),
        pass_held=likely_held,
    )


def overrun_s(
    measured: Sequence[MeasuredStep],
    min_step_s: float,
    max_step_s: float,
    even_looks_s: float | None = None,
    first_look_s: float | None = None,
) -> float:
    """The longest a measured window ran past the planned look it stopped at: a step is asked
    only at segment boundaries, so a window ends a segment's length after its look at most.
    A window the pass held past its look (the corpus covered after it) says nothing of that."""
    looks = look_times(min_step_s, max_step_s, even_looks_s, first_look_s)
    overruns = []
    for step in measured:
        if step.window is None:
            continue
        seconds = step.window[1] - step.window[0]
        look = max((t for t in looks if t <= seconds), default=seconds)
        if step.covered_s <= step.window[0] + look:
            overruns.append(seconds - look)
    return max(overruns, default=0.0)


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


def _replay_at(
    ref: MeasuredStep,
    slots: int,
    alpha: float,
    window_s: float,
    past_s: float | None = None,
    pass_scale: float = 1.0,
    from_start: bool = False,
) -> tuple[float, bool]:
    """Seconds of replay at `slots` scaled from `ref`, and whether the pass holds it
    (pass_scale: the pass that much faster or slower than `ref`'s).
    past_s (the longest overrun seen): the window runs on past `window_s` to a segment
    boundary, that long or a turn at least, and the drain takes a turn at least (the others'
    turns in flight), however briefly `ref`'s did. from_start: the rule's window starts as
    the replay does (an interleaved step's, at its first block), after no ramp."""
    turn = (slots / ref.slots) ** alpha  # a turn's cost at `slots`, relative to ref's
    per_pass = turn * ref.slots / slots  # a pass's time, relative
    ramp = ref.window[0] if ref.window is not None and not from_start else 0.0
    window_end = ref.window[1] if ref.window is not None else ref.covered_s
    drain = max(0.0, ref.replay_s - max(ref.covered_s, window_end)) * turn
    covered = ref.covered_s * per_pass * pass_scale
    measured_until = ramp * turn + window_s
    if past_s is not None:
        # a worker's seconds per turn at `slots`
        one_turn = ref.turn_cost_s * turn if math.isfinite(ref.turn_cost_s) else 0.0
        measured_until += max(past_s * turn, one_turn)
        drain = max(drain, one_turn)
    return max(covered, measured_until) + drain, covered > measured_until


class StepsAhead(msgspec.Struct, frozen=True):
    """The steps a sweep may still take, from the running one on, as its planner orders them:
    `slots` every step it may take (the closing one-slot run included), `fewest` how many of
    them it takes at least unless a step breaks a bound; `closing`: the last of them is the
    closing one-slot run, which comes whenever the sweep stops (so it is among the fewest)."""

    slots: tuple[int, ...]
    fewest: int
    closing: bool = False


def steps_ahead(
    explicit: Sequence[int] | None,
    max_slots: int,
    done: int,
    patience: int = 2,
    streak: int = 0,
    running: int | None = None,
    closes: bool = True,
) -> StepsAhead:
    """The steps `judging.sweep.sweep_steps` may still take after `done`: an explicit list as
    given; else 1, 1, 2, … up to `max_slots`, then one slot again to close (a run that checks
    for drift). At least: the one-slot runs still to come first (they never count towards
    patience), then `patience` steps without a gain, fewer by the `streak` of such steps already
    measured, and the closing run. `running`: the slot count of the step starting now (a one-
    slot step after the first two is the closing one; a streak at patience leaves only it).
    `closes`: the sweep closes with that run (its steps do not interleave)."""
    if explicit is not None:
        order = list(explicit[done:])
        closing: list[int] = []
    elif closes and done >= 2 and (running == 1 or streak >= patience):
        return StepsAhead(slots=(1,), fewest=1, closing=True)
    else:
        order = [default_order(index) for index in range(done, max_slots + 1)]
        order = [n for n in order if n <= max_slots]
        larger = done > 2 or any(n > 1 for n in order)
        closing = [1] if closes and max_slots >= 2 and larger else []
    ones = 0
    while ones < len(order) and order[ones] <= 1:
        ones += 1
    fewest = min(ones + max(1, patience - streak), len(order))
    return StepsAhead(
        slots=tuple(order + closing), fewest=fewest + len(closing), closing=bool(closing)
    )


def reference_passes(ahead: StepsAhead, passes: int | None) -> list[int | None]:
    """What each step ahead must hold of every turn (`estimate_step`'s `passes`): with
    `passes` (`latency_factor` set) the one-slot runs before any larger step are the
    reference, that many passes each, and a closing run stops at its first look; None for
    the rest, and for every step without it."""
    if passes is None:
        return [None] * len(ahead.slots)
    order = ahead.slots[:-1] if ahead.closing else ahead.slots
    leading = 0
    while leading < len(order) and order[leading] <= 1:
        leading += 1
    held: list[int | None] = [passes] * leading + [None] * (len(order) - leading)
    return held + [1] if ahead.closing else held


def sweep_left(
    measured: Sequence[MeasuredStep],
    ahead: StepsAhead,
    min_step_s: float,
    max_step_s: float,
    passes: int | None = None,
    one_pass_runs: bool = False,
    even_looks_s: float | None = None,
    first_look_s: float | None = None,
) -> tuple[float, float] | None:
    """Seconds the sweep has left: at least its fewest steps (each at its low estimate), at
    most every step it may take (each at its high one). None before the first step.
    passes: what a one-slot reference run holds of every turn (`reference_passes`).
    one_pass_runs: its one-slot runs end once they served the corpus (`estimate_step`).
    first_look_s: its steps above one slot are first looked at here (they interleave)."""
    if not ahead.slots:
        return 0.0, 0.0
    estimates = [
        estimate_step(
            measured,
            n,
            min_step_s,
            max_step_s,
            held,
            one_pass_runs and n <= 1,
            even_looks_s,
            first_look_s,
        )
        for n, held in zip(ahead.slots, reference_passes(ahead, passes), strict=True)
    ]
    known = [e for e in estimates if e is not None]
    if len(known) < len(estimates):
        return None
    fewest = min(ahead.fewest, len(known))
    # the closing run is among the fewest, but last in order
    at_least = known[: fewest - 1] + known[-1:] if ahead.closing else known[:fewest]
    return sum(e.low for e in at_least), sum(e.high for e in known)


__all__ = [
    "MeasuredStep",
    "StepEstimate",
    "cost_exponent",
    "estimate_step",
    "StepsAhead",
    "measured_step",
    "overrun_s",
    "reference_passes",
    "steps_ahead",
    "sweep_left",
]
