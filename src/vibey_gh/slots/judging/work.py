"""Recorded steps read as work done: reference costs from the one-slot runs and each step's
credited work per cluster (`statistics.paired` holds the estimator and says why).

The one-slot runs the costs are pooled over are those measured before any step of more slots
(the sweep's 1, 1); a one-slot step after a larger one closes the sweep and measures drift
(`drift_of`), so it is held to the same costs rather than pooled into them. A turn never served
at one slot is priced by a cost model fitted on the one-slot turns' uncached prompt and output
tokens; the figures say how many were and how well the model fits.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import msgspec

from .metrics import measurement_window
from .records import StepRecord, TurnRecord
from .runs import RUNS, figure_of
from .statistics.paired import (
    ClusterWork,
    CostFit,
    Ratio,
    StepWork,
    capacity_ratio,
    fit_cost,
    relative_noise,
)


def uncached_prompt(turn: TurnRecord) -> int:
    """Prompt tokens the runner had to read (those it took from its cache left out)."""
    prompt = turn.result.prompt_tokens or 0
    return max(0, prompt - (turn.result.cached_tokens or 0))


class ReferenceCosts(msgspec.Struct, frozen=True):
    """Each turn id's mean one-slot service time (`measured`, with every sample in
    `samples`), the cost model for the others (`fit`, None when it cannot be fitted) and the
    relative spread of a turn's time about its own mean (`noise`)."""

    measured: Mapping[str, float]
    samples: Mapping[str, tuple[float, ...]]
    fit: CostFit | None
    noise: float | None
    fallback: float

    def cost_of(self, turn: TurnRecord) -> tuple[float, bool]:
        """(reference seconds, priced by the model rather than measured)."""
        measured = self.measured.get(turn.turn_id)
        if measured is not None:
            return measured, False
        if self.fit is not None:
            modelled = self.fit.cost(uncached_prompt(turn), turn.result.output_tokens or 0)
            if modelled > 0:
                return modelled, True
        return self.fallback, True


def reference_costs(one_slot: Sequence[StepRecord]) -> ReferenceCosts | None:
    """The costs every step's work is priced at; None when no one-slot turn was served."""
    samples: dict[str, list[float]] = defaultdict(list)
    tokens: list[tuple[int, int, float]] = []
    for step in one_slot:
        for turn in step.turns:
            result = turn.result
            if not result.served or result.ended <= result.started:
                continue
            seconds = result.ended - result.started
            samples[turn.turn_id].append(seconds)
            if result.prompt_tokens is not None and result.output_tokens is not None:
                tokens.append((uncached_prompt(turn), result.output_tokens, seconds))
    if not samples:
        return None
    measured = {k: sum(v) / len(v) for k, v in samples.items()}
    return ReferenceCosts(
        measured=measured,
        samples={k: tuple(v) for k, v in samples.items()},
        fit=fit_cost(tokens),
        noise=relative_noise(samples),
        fallback=sum(measured.values()) / len(measured),
    )


def cluster_of(turn: TurnRecord, shape: str) -> str:
    """The unit the noise is resampled by: the run for a corpus of whole runs, else the turn."""
    return turn.segment_id if figure_of(shape) == RUNS else turn.turn_id


def step_work(
    turns: Sequence[TurnRecord],
    slots: int,
    shape: str,
    window: tuple[float, float],
    costs: ReferenceCosts,
) -> tuple[StepWork, frozenset[str]]:
    """The step's clusters' credited work and worker time inside `window`, and the turn ids
    priced by the cost model. A served turn is credited its reference cost times the share of
    its service interval inside the window; each worker's time is charged to the turn it
    served and the wait after it up to its next send (its tools' time, in a run)."""
    start, end = window
    work: dict[str, float] = defaultdict(float)
    spent: dict[str, float] = defaultdict(float)
    modelled: set[str] = set()
    by_worker: dict[int, list[TurnRecord]] = defaultdict(list)
    for turn in turns:
        by_worker[turn.worker].append(turn)
    for sent in by_worker.values():
        sent.sort(key=lambda t: t.result.started)
        for position, turn in enumerate(sent):
            result = turn.result
            until = sent[position + 1].result.started if position + 1 < len(sent) else result.ended
            charged = _overlap(result.started, max(until, result.ended), start, end)
            if charged <= 0:
                continue
            key = cluster_of(turn, shape)
            spent[key] += charged
            served_s = result.ended - result.started
            if result.served and served_s > 0:
                cost, by_model = costs.cost_of(turn)
                if by_model:
                    modelled.add(turn.turn_id)
                work[key] += cost * _overlap(result.started, result.ended, start, end) / served_s
    clusters = {k: ClusterWork(work.get(k, 0.0), spent[k]) for k in spent}
    return StepWork(slots, clusters), frozenset(modelled)


def _overlap(low: float, high: float, start: float, end: float) -> float:
    return max(0.0, min(high, end) - max(low, start))


class Pairing(msgspec.Struct, frozen=True):
    """What every step of a sweep is paired with: the reference costs, the pooled one-slot
    runs' work, and the mean reference cost of a corpus turn and of a run (to show capacity
    as turns or runs per hour)."""

    costs: ReferenceCosts
    pool: tuple[StepWork, ...]
    shape: str
    turn_cost: float
    run_cost: float | None

    def rate_of(self, capacity: float) -> float:
        """Capacity as the deciding figure: runs per hour for whole runs, else turns/h."""
        if figure_of(self.shape) == RUNS and self.run_cost:
            return capacity * 3600.0 / self.run_cost
        return self.turns_per_hour(capacity)

    def turns_per_hour(self, capacity: float) -> float:
        return capacity * 3600.0 / self.turn_cost if self.turn_cost > 0 else 0.0

    def work_of(self, step: StepRecord) -> StepWork | None:
        """A steady-state step's work in its measurement window, priced at these costs."""
        if step.measurement is None:
            return None
        window = measurement_window(step.turns, step.slots)
        if window is None:
            return None
        return step_work(step.turns, step.slots, self.shape, window, self.costs)[0]

    def gain(self, work: StepWork) -> Ratio | None:
        """The step's capacity over the pooled one-slot runs', paired by cluster."""
        return capacity_ratio([work], self.pool)


def pooled_steps(steps: Sequence[StepRecord]) -> list[StepRecord]:
    """The one-slot steady-state steps measured before any step of more slots."""
    pooled = []
    for step in steps:
        if step.slots > 1:
            break
        if step.measurement is not None:
            pooled.append(step)
    return pooled


def closing_steps(steps: Sequence[StepRecord]) -> list[StepRecord]:
    """One-slot steady-state steps measured after a step of more slots: the drift checks."""
    seen_larger = False
    closing = []
    for step in steps:
        seen_larger = seen_larger or step.slots > 1
        if seen_larger and step.slots == 1 and step.measurement is not None:
            closing.append(step)
    return closing


def pairing_of(steps: Sequence[StepRecord]) -> Pairing | None:
    """The sweep's pairing; None when it has no steady-state one-slot run to pair with (the
    one-pass method, or evidence without one): such a sweep is judged on counted turns."""
    pooled = pooled_steps(steps)
    costs = reference_costs(pooled)
    if costs is None:
        return None
    shape = steps[0].shape
    pool = []
    for step in pooled:
        window = measurement_window(step.turns, step.slots)
        if window is not None:
            pool.append(step_work(step.turns, 1, shape, window, costs)[0])
    if not pool:
        return None
    turn_cost, run_cost = _corpus_costs(steps, costs)
    return Pairing(costs, tuple(pool), shape, turn_cost, run_cost)


def _corpus_costs(steps: Sequence[StepRecord], costs: ReferenceCosts) -> tuple[float, float | None]:
    """Mean reference cost of a corpus turn (each turn id once) and of a run."""
    first: dict[str, TurnRecord] = {}
    for step in steps:
        for turn in step.turns:
            first.setdefault(turn.turn_id, turn)
    if not first:
        return 0.0, None
    total = sum(costs.cost_of(turn)[0] for turn in first.values())
    runs = {turn.segment_id for turn in first.values()}
    return total / len(first), (total / len(runs) if runs else None)
