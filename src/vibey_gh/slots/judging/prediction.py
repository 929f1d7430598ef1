"""The closed-system model fitted on a judged sweep (`statistics.closed_system`): what the
steps measured so far predict for every N, read out of their verdicts alone, so the sweep
plans its next step on it and the report shows it beside what was measured."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from .judge import Verdict
from .statistics.closed_system import Prediction, fit_closed_system


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
    return fit_closed_system(busy, gains, min_gain, max(max_slots, *gains, 1), noise)


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
