"""Runs per hour with its noise, from each worker's progress through its runs.

Counting the runs that ended in each batch of the window leaves an interval that says more
about counting than about the runner: a run is many turns and much waiting, so a batch holds
only a few runs, and whether one that ended near a batch's edge falls in or out moves that
batch by a third. That counting noise set the width of the interval (a step of steadily
cycling workers read ±12%), and it made the figure depend on where the window was cut: the
steady-state rule, reading the window up to now, and the verdict, reading it up to the first
worker's last answer, saw different batches of the same runs.

So each run is credited over its *cycle*: from the end of its worker's previous unit (for a
worker's first, from the start of the wait before its first turn) to its last answer, each
batch taking the share of the cycle it holds. A completed run is worth one, a run with a
turn not served nothing. A worker that cycles steadily adds its own rate to every batch, so
what spread is left is the runs' and the runner's own. This is the interactive response-time
law of a closed system: N workers, each always inside one cycle of a run of latency R and
the waits Z before its turns, complete N/(R+Z) runs per unit of time, and the credit in a
window of length W is N·W/(R+Z) on average. `bench/think_time.py` compares it with the
throughput of the product-form network the replay is.

The window runs from when every worker had sent its first turn (the ramp-up's end, as for
turns per hour) to when the first worker closed its last unit: every worker's cycles cover
it whole, so a run the end of the step cut off is never half counted. A batch is at least
`CYCLES_PER_BATCH` mean cycles wide, so neighbouring batches do not share most of one run.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..records import TurnRecord
from .stats import standard_error

MAX_BATCHES = 10
CYCLES_PER_BATCH = 2.0


@dataclass(frozen=True)
class Cycle:
    """One unit of one worker from the end of its previous one: (start, end], worth `credit`."""

    worker: int
    start: float
    end: float
    credit: float


@dataclass(frozen=True)
class RunRate:
    """Runs per hour in `window`, its standard error from `batches` batch means (None with
    fewer than two), and how many runs completed inside the window."""

    per_hour: float
    se: float | None
    batches: int
    window: tuple[float, float]
    completed: int


def run_cycles(turns: Sequence[TurnRecord]) -> dict[int, list[Cycle]]:
    """Each worker's closed units as cycles, in the order it replayed them."""
    by_worker: dict[int, list[TurnRecord]] = defaultdict(list)
    for turn in turns:
        by_worker[turn.worker].append(turn)
    cycles: dict[int, list[Cycle]] = {}
    for worker, sent in by_worker.items():
        sent.sort(key=lambda t: t.result.started)
        own: list[Cycle] = []
        since = sent[0].result.started - sent[0].think_s
        unit: str | None = None
        served = True
        for turn in sent:
            if unit != turn.segment_id:
                unit, served = turn.segment_id, True
            served = served and turn.result.served
            if turn.closes:
                own.append(Cycle(worker, since, turn.result.ended, 1.0 if served else 0.0))
                since, unit = turn.result.ended, None
        cycles[worker] = own
    return cycles


def runs_window(
    turns: Sequence[TurnRecord], cycles: dict[int, list[Cycle]], workers: int
) -> tuple[float, float] | None:
    """(every worker had sent its first turn, the first worker closed its last unit)."""
    first_sent: dict[int, float] = {}
    for turn in turns:
        started = turn.result.started
        first_sent[turn.worker] = min(first_sent.get(turn.worker, started), started)
    closed = [own[-1].end for own in cycles.values() if own]
    if len(first_sent) < workers or not first_sent or len(closed) < len(first_sent):
        return None
    start, end = max(first_sent.values()), min(closed)
    return (start, end) if end > start else None


def progress_batches(cycles: Sequence[Cycle], start: float, end: float) -> list[float]:
    """Runs per hour of each equal batch of (start, end], every cycle's credit shared out over
    the batches in proportion to the time of it each holds; [] when fewer than two batches
    of `CYCLES_PER_BATCH` mean cycles fit."""
    inside = [c for c in cycles if c.end > start and c.start < end]
    if not inside or end <= start:
        return []
    mean_cycle = sum(c.end - c.start for c in inside) / len(inside)
    batches = min(MAX_BATCHES, math.floor((end - start) / max(mean_cycle * CYCLES_PER_BATCH, 1e-9)))
    if batches < 2:
        return []
    width = (end - start) / batches
    credit = [0.0] * batches
    for cycle in inside:
        if cycle.credit == 0:
            continue
        span = cycle.end - cycle.start
        if span <= 0:
            at = min(batches - 1, max(0, math.ceil((cycle.end - start) / width) - 1))
            credit[at] += cycle.credit
            continue
        first = max(0, math.floor((max(cycle.start, start) - start) / width))
        last = min(batches - 1, math.floor((min(cycle.end, end) - start) / width))
        for index in range(first, last + 1):
            low, high = start + index * width, start + (index + 1) * width
            overlap = min(high, cycle.end) - max(low, cycle.start)
            if overlap > 0:
                credit[index] += cycle.credit * overlap / span
    return [c * 3600.0 / width for c in credit]


def run_rate(turns: Sequence[TurnRecord], workers: int) -> RunRate | None:
    """Runs per hour of a step of whole runs with its batch-means noise; None without a
    window (not every worker started, or one never closed a unit)."""
    cycles = run_cycles(turns)
    window = runs_window(turns, cycles, workers)
    if window is None:
        return None
    start, end = window
    every = [c for own in cycles.values() for c in own]
    batches = progress_batches(every, start, end)
    completed = sum(1 for c in every if c.credit > 0 and start < c.end <= end)
    if batches:
        per_hour = sum(batches) / len(batches)
    else:
        per_hour = _credit_in(every, start, end) * 3600.0 / (end - start)
    return RunRate(per_hour, standard_error(batches), len(batches), window, completed)


def _credit_in(cycles: Sequence[Cycle], start: float, end: float) -> float:
    total = 0.0
    for cycle in cycles:
        span = cycle.end - cycle.start
        overlap = min(end, cycle.end) - max(start, cycle.start)
        if overlap > 0 and span > 0:
            total += cycle.credit * overlap / span
        elif span <= 0 and start < cycle.end <= end:
            total += cycle.credit
    return total
