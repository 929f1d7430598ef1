"""The sweep as a generator: it yields the next slot count and receives that step's record.

Steps are N = 1, 1, 2, 3, … and one slot again at the end (or an explicit list). The sweep
stops at the first step above one slot that breaks a bound, or after `patience` consecutive
steps that gain less than `min_gain` over the best throughput so far. A step counts as such
when its whole interval over the best step before it (both steps' noise, `rate_against`) is
below that bar, or lies inside the indifference zone short of it (`short_of_min_gain`), or
when it was measured to `max_step_seconds` and still straddles it (longer was tried:
undecided at the cap counts against the step); one whose interval clears it resets
the count, and one that straddles it before the cap (the one-pass method) leaves the count as
it was. Bounds are re-read (through `bounds_now`) at every decision. Each step is judged once,
here: its verdict goes to `on_verdict` (the progress line says it), so no caller judges the
step again. Completed steps from a checkpoint are fed in exactly like fresh ones, so a resumed
sweep makes the same decisions as an uninterrupted one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Generator, Sequence

from ...interfaces.bounds import Bounds
from .baseline import tried_to_cap
from .judge import Verdict, judge_sweep, rates_of
from .records import StepRecord
from .statistics.closed_system import Prediction, fit_closed_system
from .statistics.knee import (
    ADDS_LESS,
    CLIMBS,
    UNDECIDED,
    best_of,
    rate_against,
    rate_over,
    short_of_min_gain,
)

DEFAULT_MAX_SLOTS = 16


def default_order(index: int) -> int:
    """1, 1, 2, 3, …: one slot twice (the fidelity and noise baseline), then one more each step."""
    return 1 if index < 2 else index


def next_slots(measured: Collection[int], top: int, prediction: Prediction | None) -> int:
    """The slot count to measure next, above one slot: the predicted knee's lower neighbour
    where the model has found the knee well above the next N in order (its neighbours and it
    are then measured in order), else the next N in order above `top` (the largest step that
    climbed) not yet measured. `measured`: the slot counts above one measured so far. A jump
    skips slot counts, never the bounds: the answer is only ever a measured step, and one
    that climbed over the best measured before it."""
    in_order = top + 1
    while in_order in measured:
        in_order += 1
    if prediction is None or not prediction.identified or prediction.ideal is None:
        return in_order
    below_knee = prediction.ideal - 1
    if below_knee > in_order and below_knee > max(measured, default=1):
        return below_knee
    return in_order


def model_agrees(measured: Collection[int], top: int, prediction: Prediction | None) -> bool:
    """After a step that added less than min_gain: the model, fitted on every step so far,
    puts the knee at or below `top` (the largest step that climbed) and the step above it was
    measured and did not climb — the predicted knee and its neighbours were measured and
    agree, so a second step without a gain would only confirm it."""
    return (
        prediction is not None
        and prediction.identified
        and prediction.ideal is not None
        and prediction.ideal <= top
        and top + 1 in measured
    )


def sweep_steps(
    bounds_now: Callable[[], Bounds],
    explicit: Sequence[int] | None = None,
    max_slots: int = DEFAULT_MAX_SLOTS,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> Generator[int, StepRecord, str]:
    """Yield slot counts; `send` each step's record back; the return value says why it stopped.
    `on_verdict` hears each step's verdict as soon as it is judged, before the sweep moves on.
    In the default order the sweep closes with one slot again once it stops (1, 1, 2, …, k, 1):
    that run's capacity against the first two is the drift every gain interval is widened by
    (`judging.gains`) — unless every step above one slot interleaved. An explicit list is
    measured as given."""
    steps: list[StepRecord] = []
    reason = yield from _steps_until_stopped(steps, bounds_now, explicit, max_slots, on_verdict)
    # a step that interleaved holds its own one-slot reference (`interleaved`): a sweep of
    # such steps has no gain the drift check would widen
    unreferenced = any(s.slots > 1 and not s.blocks for s in steps)
    if explicit is None and unreferenced and steps[-1].measurement is not None:
        steps.append((yield 1))
        if on_verdict is not None:
            on_verdict(judge_sweep(steps, bounds_now()).verdicts[-1])
    return reason


def _steps_until_stopped(
    steps: list[StepRecord],
    bounds_now: Callable[[], Bounds],
    explicit: Sequence[int] | None,
    max_slots: int,
    on_verdict: Callable[[Verdict], None] | None,
) -> Generator[int, StepRecord, str]:
    """The sweep up to its stop, appending each step to `steps`; returns why it stopped."""
    strikes = 0
    index = 0
    top = 1  # the largest step that climbed
    ceiling = max_slots  # lowered below a step a jump reached that broke a bound
    prediction: Prediction | None = None
    while True:
        measured = {s.slots for s in steps if s.slots > 1}
        if explicit is not None:
            if index >= len(explicit):
                return "every requested step was measured"
            slots = explicit[index]
        elif index < 2:
            slots = 1
        else:
            slots = next_slots(measured, top, prediction)
            if slots > ceiling:
                slots = next_slots(measured, top, None)
            if slots > ceiling:
                return f"reached the largest slot count to try ({ceiling})"
        step = yield slots
        index += 1
        steps.append(step)
        bounds = bounds_now()
        verdicts = judge_sweep(steps, bounds).verdicts
        verdict = verdicts[-1]
        if on_verdict is not None:
            on_verdict(verdict)
        if slots <= 1:
            continue
        if explicit is None:
            prediction = sweep_prediction(verdicts, bounds.min_gain, max_slots)
        if not verdict.inside_bounds:
            skipped = any(n not in measured for n in range(top + 1, slots))
            if explicit is None and skipped:
                # a jump past slot counts never measured broke a bound: they may not
                ceiling = slots - 1
                continue
            return f"stopped at {slots} slots: {verdict.broken[0]}"
        rates = rates_of(verdicts)
        best = best_of(rates[:-1], bounds.confidence)
        # the knee rule's own tests (`rate_against`): a step patience stops on is never the
        # answer, and the step that resets the count is one the answer may be; one too short
        # for an interval says nothing
        gain, short = UNDECIDED, False
        if best is not None and not rates[-1].too_short:
            gain = rate_against(rates[-1], best, bounds.min_gain, bounds.confidence)
            over = rate_over(rates[-1], best, bounds.confidence)
            short = best.throughput.value > 0 and short_of_min_gain(over, bounds.min_gain)
        if gain == CLIMBS:
            strikes = 0
            top = max(top, slots)
        elif gain == ADDS_LESS or short or tried_to_cap(step):
            # measured to the cap and still undecided: longer steps were tried, and a sweep
            # of such steps would otherwise run every N to the cap and answer "too noisy" —
            # also where no earlier step had an interval to be a bar (too few turns or runs);
            # a marginal step short of min_gain stopped as one measured longer would
            strikes += 1
            if explicit is None and model_agrees(measured | {slots}, top, prediction):
                return (
                    f"stopped at {slots} slots without a {bounds.min_gain:.0%} gain: the "
                    f"closed-system model fitted on the steps so far puts the knee at "
                    f"N={prediction.ideal if prediction else top}, and its neighbours were "
                    "measured"
                )
        if strikes >= bounds.patience:
            return (
                f"stopped after {strikes} steps without a {bounds.min_gain:.0%} gain "
                "over the best throughput so far"
            )


# The closed-system model fitted on a judged sweep (`statistics.closed_system`): what the steps
# measured so far predict for every N, read out of their verdicts alone, so the sweep plans its
# next step on it and the report shows it beside what was measured.


def one_slot_busy_share(verdicts: Sequence[Verdict]) -> float | None:
    """One slot's paired capacity — its busy share S/(S + T) — over the one-slot runs measured
    before any larger step (the pooled ones); None in a sweep that was not paired."""
    shares = []
    for verdict in verdicts:
        if verdict.slots > 1:
            break
        if verdict.metrics.capacity is not None and verdict.metrics.capacity > 0:
            shares.append(verdict.metrics.capacity)
    return sum(shares) / len(shares) if shares else None


def sweep_prediction(
    verdicts: Sequence[Verdict], min_gain: float, max_slots: int
) -> Prediction | None:
    """The model fitted on the sweep's paired steps inside every bound (a slot count measured
    twice: the mean of its log gains, with the larger standard error); None before a paired
    step of more than one slot."""
    busy = one_slot_busy_share(verdicts)
    if busy is None:
        return None
    logs: dict[int, list[float]] = defaultdict(list)
    noise: dict[int, float] = {}
    for verdict in verdicts:
        metrics = verdict.metrics
        gain = metrics.capacity_gain
        if verdict.slots <= 1 or not verdict.inside_bounds or gain is None or gain <= 0:
            continue
        logs[verdict.slots].append(math.log(gain))
        if metrics.capacity_gain_se is not None:
            noise[verdict.slots] = max(noise.get(verdict.slots, 0.0), metrics.capacity_gain_se)
    gains = {n: math.exp(sum(v) / len(v)) for n, v in logs.items()}
    # an interleaved step's gain is over its own one-slot blocks: no drift of one slot's
    # runs moves it, so the model's level is not free to
    own = all(v.metrics.gain_over_own_blocks for v in verdicts if v.slots > 1)
    top = max(max_slots, *gains, 1)
    return fit_closed_system(busy, gains, min_gain, top, noise, level_free=not own)


def next_step_gain(verdicts: Sequence[Verdict], slots: int, min_gain: float) -> float:
    """What the step after one of `slots` may gain over it, as the model fitted on the steps
    before says: its curve's N + 1 over N where it has found the runner's knee, else what
    lanes that never wait for each other would (N + 1)/N — the most the next step could gain.
    How precisely a step must be known to be the next step's bar follows from it."""
    prediction = sweep_prediction(verdicts, min_gain, slots + 1)
    ceiling = (slots + 1) / slots
    if prediction is None or not prediction.identified:
        return ceiling
    here, after = prediction.gain_at(slots), prediction.gain_at(slots + 1)
    if here is None or after is None or here <= 0:
        return ceiling
    return after / here
