"""Recorded steps read as work done: reference costs from the one-slot runs and each step's
credited work per cluster (`statistics.paired` holds the estimator and says why).

The one-slot runs the costs are pooled over are those measured before any step of more slots
(the sweep's 1, 1); a one-slot step after a larger one closes the sweep and measures drift
(`drift_of`), so it is held to the same costs rather than pooled into them. A turn never served
at one slot is priced by a cost model fitted on the one-slot turns' uncached prompt and output
tokens; the figures say how many were and how well the model fits.

A sweep whose think policy waits before turns (its steps' `measurement` say `gains`:
`THINK_LAW`) is priced by the closed-system law instead (`statistics.think_law`): each served
turn's response time against its reference cost, the corpus's think time taken as known.
Evidence without that mark is priced as it was.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import msgspec
from msgspec import field

from .interleaved import interleaved_gain, interleaved_work, own_prices
from .metrics import measurement_window
from .records import BlockRecord, StepRecord, TurnRecord
from .runs import RUNS, cluster_of, figure_of
from .statistics.paired import (
    Between,
    ClusterWork,
    CostFit,
    Ratio,
    StepWork,
    between_runs,
    capacity_ratio,
    fit_cost,
    pooled_capacity,
    relative_noise,
)
from .statistics.stats import MIN_BATCHES
from .statistics.think_law import TurnTimes, busy_share, law_work

# a step's `measurement["gains"]` when its sweep's think policy waits: its gains are read by
# the closed-system law from response times (`statistics.think_law`)
THINK_LAW = "closed-system law"
GAINS_KEY = "gains"


def by_think_law(step: StepRecord) -> bool:
    """The step was recorded to be judged by the closed-system law (its think policy waits)."""
    return (step.measurement or {}).get(GAINS_KEY) == THINK_LAW


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

    def variance_of(self, turn_id: str) -> float | None:
        """The relative variance of a turn's reference cost: the turns' spread squared over
        its one-slot samples; a turn the model priced counts as one sample (the model is
        fitted on the same times, and no better known than one of them). None when no turn
        was served twice, so the spread is unknown."""
        if self.noise is None:
            return None
        return self.noise**2 / len(self.samples.get(turn_id, (0.0,)))


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


# A block of a step's window is at least this many mean turn intervals (service and the wait
# after it) long, so that a turn rarely spans two blocks, and there are at least MIN_BATCHES
# of them (shorter where the window is short) and at most MAX_BLOCKS.
BLOCK_TURNS = 2.0
MAX_BLOCKS = 30


class _Charge(msgspec.Struct, frozen=True):
    """One served or sent turn as the window sees it: its cluster, the interval its worker's
    time is charged over, and its credit (reference seconds) over its service interval."""

    turn_id: str
    cluster: str
    charged: tuple[float, float]
    served: tuple[float, float]
    cost: float


def step_work(
    turns: Sequence[TurnRecord],
    slots: int,
    shape: str,
    window: tuple[float, float],
    costs: ReferenceCosts,
    sets_costs: bool = False,
) -> tuple[StepWork, frozenset[str]]:
    """The step's clusters' credited work and worker time inside `window`, and the turn ids
    priced by the cost model. A served turn is credited its reference cost times the share of
    its service interval inside the window; each worker's time is charged to the turn it
    served and the wait after it up to its next send (its tools' time, in a run). Where the
    costs' spread is known, the same credit and time in the window's blocks and each turn
    id's credit with its cost's variance (`statistics.paired` says why); `sets_costs`: the
    step is one of the runs the costs were taken from."""
    start, end = window
    charges, modelled = _charges(turns, shape, costs)
    work: dict[str, float] = defaultdict(float)
    spent: dict[str, float] = defaultdict(float)
    by_turn: dict[str, float] = defaultdict(float)
    for charge in charges:
        charged = _overlap(*charge.charged, start, end)
        if charged <= 0:
            continue
        spent[charge.cluster] += charged
        credit = _credit(charge, start, end)
        work[charge.cluster] += credit
        by_turn[charge.turn_id] += credit
    clusters = {k: ClusterWork(work.get(k, 0.0), spent[k]) for k in spent}
    priced = modelled & set(by_turn)
    variances = {k: costs.variance_of(k) for k in by_turn}
    if sets_costs or not charges or any(v is None for v in variances.values()):
        return StepWork(slots, clusters, sets_costs=sets_costs), frozenset(priced)
    turn_work = {k: (w, v) for k, w in by_turn.items() if (v := variances[k]) is not None}
    blocks = _blocks(charges, start, end)
    return StepWork(slots, clusters, blocks, turn_work), frozenset(priced)


def _charges(
    turns: Sequence[TurnRecord], shape: str, costs: ReferenceCosts
) -> tuple[list[_Charge], set[str]]:
    """Every sent turn's charge, and the turn ids the cost model priced."""
    charges: list[_Charge] = []
    modelled: set[str] = set()
    by_worker: dict[int, list[TurnRecord]] = defaultdict(list)
    for turn in turns:
        by_worker[turn.worker].append(turn)
    for sent in by_worker.values():
        sent.sort(key=lambda t: t.result.started)
        for position, turn in enumerate(sent):
            result = turn.result
            until = sent[position + 1].result.started if position + 1 < len(sent) else result.ended
            cost = 0.0
            if result.served and result.ended > result.started:
                cost, by_model = costs.cost_of(turn)
                if by_model:
                    modelled.add(turn.turn_id)
            charges.append(
                _Charge(
                    turn.turn_id,
                    cluster_of(turn, shape),
                    (result.started, max(until, result.ended)),
                    (result.started, result.ended),
                    cost,
                )
            )
    return charges, modelled


def _credit(charge: _Charge, start: float, end: float) -> float:
    """The turn's reference cost times the share of its service interval in (start, end)."""
    low, high = charge.served
    if charge.cost <= 0 or high <= low:
        return 0.0
    return charge.cost * _overlap(low, high, start, end) / (high - low)


def _blocks(charges: Sequence[_Charge], start: float, end: float) -> tuple[ClusterWork, ...]:
    """The window cut into equal blocks of wall time, each with the credit and worker time
    that fall in it: at least BLOCK_TURNS mean turn intervals long where the window allows."""
    inside = [c.charged[1] - c.charged[0] for c in charges if _overlap(*c.charged, start, end) > 0]
    if not inside or end <= start:
        return ()
    length = sum(inside) / len(inside) * BLOCK_TURNS
    count = math.floor((end - start) / length) if length > 0 else MAX_BLOCKS
    count = max(MIN_BATCHES, min(MAX_BLOCKS, count))
    width = (end - start) / count
    work, spent = [0.0] * count, [0.0] * count
    for charge in charges:
        # only the blocks the charge reaches into (a turn spans one or two)
        first = max(0, math.floor((charge.charged[0] - start) / width))
        last = min(count - 1, math.floor((charge.charged[1] - start) / width))
        for index in range(first, last + 1):
            low, high = start + index * width, start + (index + 1) * width
            work[index] += _credit(charge, low, high)
            spent[index] += _overlap(*charge.charged, low, high)
    return tuple(ClusterWork(w, t) for w, t in zip(work, spent, strict=True))


def _overlap(low: float, high: float, start: float, end: float) -> float:
    return max(0.0, min(high, end) - max(low, start))


def law_step_work(
    turns: Sequence[TurnRecord],
    slots: int,
    window: tuple[float, float],
    costs: ReferenceCosts,
    busy: float,
) -> tuple[StepWork, frozenset[str]]:
    """The step's served turns as the closed-system law reads them (`statistics.think_law`),
    and the turn ids the cost model priced: every turn sent from the window's start on,
    whatever its end — the law needs no window, only turns, and a worker that stopped while
    waiting out a think time ends the window long before the others' last answers. Once the
    step has ended every turn sent has its answer; at a look the turns still in flight (at
    most one a worker, and the longer ones more likely) are not yet there."""
    start = window[0]
    served: list[TurnTimes] = []
    modelled: set[str] = set()
    for turn in turns:
        result = turn.result
        if not result.served or result.ended <= result.started:
            continue
        if result.started < start:
            continue
        reference, by_model = costs.cost_of(turn)
        if by_model:
            modelled.add(turn.turn_id)
        served.append(TurnTimes(turn.turn_id, result.ended - result.started, reference))
    return law_work(slots, served, busy), frozenset(modelled)


class Pairing(msgspec.Struct, frozen=True):
    """What every step of a sweep is paired with: the reference costs, the pooled one-slot
    runs' work, and the mean reference cost of a corpus turn and of a run (to show capacity
    as turns or runs per hour)."""

    costs: ReferenceCosts
    pool: tuple[StepWork, ...]
    shape: str
    turn_cost: float
    run_cost: float | None
    # how far one slot's capacity moved between its runs (the pooled and the closing ones)
    between: Between = field(default_factory=Between)
    # one slot's busy share on the corpus where the sweep is judged by the closed-system law
    # (its think policy waits); None: by credited work
    law_busy: float | None = None

    def step_work(
        self,
        turns: Sequence[TurnRecord],
        slots: int,
        window: tuple[float, float],
        blocks: Sequence[BlockRecord] = (),
    ) -> tuple[StepWork, frozenset[str]]:
        """A step's work inside `window` as this sweep is judged, and the turns the cost model
        priced: by the closed-system law, by its blocks' pairs where it interleaved (those
        closed by the window's end: `interleaved`), or by credited work."""
        if self.law_busy is not None:
            return law_step_work(turns, slots, window, self.costs, self.law_busy)
        level = pooled_capacity(self.pool) if blocks else None
        if level is not None and level > 0:
            price = own_prices(turns, blocks, self.costs.samples, self.costs.cost_of, window[1])
            return interleaved_work(turns, slots, self.shape, blocks, price, level, window[1])
        return step_work(turns, slots, self.shape, window, self.costs)

    def rate_of(self, capacity: float) -> float:
        """Capacity as the deciding figure: runs per hour for whole runs, else turns/h."""
        if figure_of(self.shape) == RUNS and self.run_cost:
            return capacity * 3600.0 / self.run_cost
        return self.turns_per_hour(capacity)

    def turns_per_hour(self, capacity: float) -> float:
        return capacity * 3600.0 / self.turn_cost if self.turn_cost > 0 else 0.0

    def work_of(self, step: StepRecord) -> StepWork | None:
        """A steady-state step's work in its measurement window, priced at these costs."""
        window = judged_window(step)
        if window is None:
            return None
        return self.step_work(step.turns, step.slots, window, step.blocks)[0]

    def gain(self, work: StepWork) -> Ratio | None:
        """The step's capacity over the pooled one-slot runs', paired by cluster; an
        interleaved step's over its own one-slot blocks (`interleaved.interleaved_gain`)."""
        level = pooled_capacity(self.pool) if work.reference else None
        if level is not None:
            return interleaved_gain(work, level)
        return capacity_ratio([work], self.pool)


def judged_window(step: StepRecord) -> tuple[float, float] | None:
    """A steady-state step's window: where all its workers were busy, or where it interleaved,
    from its first block's start to its last block's stop; None for a one-pass step."""
    if step.measurement is None:
        return None
    if step.blocks:
        return step.blocks[0].start, step.blocks[-1].stop
    return measurement_window(step.turns, step.slots)


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
    busy = _busy_share(steps, costs) if by_think_law(pooled[0]) else None
    pool, runs = [], []
    for step in [*pooled, *closing_steps(steps)]:
        window = measurement_window(step.turns, step.slots)
        if window is None:
            continue
        if busy is not None:
            work = law_step_work(step.turns, 1, window, costs, busy)[0]
            runs.append(work)
            if any(step is one for one in pooled):
                pool.append(work)
            continue
        runs.append(step_work(step.turns, 1, shape, window, costs)[0])
        if any(step is one for one in pooled):
            pool.append(step_work(step.turns, 1, shape, window, costs, sets_costs=True)[0])
    if not pool:
        return None
    turn_cost, run_cost = _corpus_costs(steps, costs)
    between = between_runs(runs, len(pool))
    return Pairing(costs, tuple(pool), shape, turn_cost, run_cost, between, busy)


def _busy_share(steps: Sequence[StepRecord], costs: ReferenceCosts) -> float:
    """One slot's busy share on the corpus: each turn id once, its reference cost against the
    think time replayed before it (`statistics.think_law.busy_share`)."""
    first: dict[str, TurnRecord] = {}
    for step in steps:
        for turn in step.turns:
            first.setdefault(turn.turn_id, turn)
    turns = list(first.values())
    return busy_share([costs.cost_of(t)[0] for t in turns], [t.think_s for t in turns])


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
