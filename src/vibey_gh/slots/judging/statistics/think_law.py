"""Capacity under think time from the runner's part alone: the closed-system law.

Where every turn waits a think time before it is sent, a slot is idle most of the time and a
step's capacity (its busy share) depends on which runs happen to be in flight: a run that
waits 1 s between turns and one that waits 60 s differ thirtyfold, so a step that serves a few
of a corpus's very different runs does not measure the runner, and one that serves them all
takes hours. But the think time is no measurement: it is the corpus's own, replayed exactly.
What the runner adds is each turn's response time, and that can be held against the same
turn's one-slot response time one by one, as `latency_factor` holds turns.

N workers, each always either waiting a turn's think time or waiting for its answer, complete
X(N) = N / (R_N + Z) turns a second (the interactive response-time law; Little's law around
the loop), whatever the order or spread of the turns: R_N is their mean response time at N,
Z their mean think time. Over the same turns one slot completes X(1) = 1 / (R_1 + Z), so

    X(N) / X(1) = N · (R_1 + Z) / (R_N + Z).

R_1 and Z are known before any step: R_1 is the corpus's mean one-slot response time (each
turn's reference cost, the mean of its one-slot times), Z its mean think time per turn as the
policy replays it (each turn id once: the law's mix is the corpus's, as production cycles
through all of it, not whichever runs one step happened to hold in flight). What a step
measures is R_N / R_1: the ratio of sums Σ r_N / Σ r_1 over the turns it served, each matched
by turn id with its own one-slot time — work-weighted, so a costly turn counts by its cost.
With a = R_1 / (R_1 + Z), one slot's busy share, the law reads

    X(N) / X(1) = N / (a · R_N/R_1 + 1 − a).

As a `StepWork`, each turn id is one cluster: credited a · Σ r_1 and charged
Σ (a · r_N + (1 − a) · r_1) over the times the step served it, so `StepWork.capacity` is
a · X(N)/X(1) — one slot's busy share times the gain, the units of the paired estimator, which
the closed-system model reads — and `capacity_ratio` of a step over the one-slot runs priced
the same way is the gain, with its noise from resampling turns (the delete-one-turn
jackknife): a turn's response ratio varies with the runner's noise and with what it was served
beside, and that is the variation the interval holds; the think time, known, adds none, and
the larger it is against the response time (a → 0) the less the runner's noise moves the gain.
No step needs a whole pass or whole runs: any turns it served, each against its own one-slot
time, measure R_N / R_1.

Pure functions of plain numbers: `judging.work` reads them out of recorded steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from .paired import ClusterWork, Ratio, StepWork, capacity_ratio


class TurnTimes(msgspec.Struct, frozen=True):
    """One served turn as the law reads it: its id, its response time (`response`, seconds from
    send to answer) and its one-slot reference response time (`reference`: the mean of its
    one-slot times, or the cost model's price for a turn never served at one slot)."""

    turn_id: str
    response: float
    reference: float


def closed_loop_gain(slots: int, one_slot: float, at_slots: float, think: float) -> float:
    """X(N)/X(1) = N · (R_1 + Z) / (R_N + Z): what N workers complete over one worker, each
    turn waiting `think` (Z) and answered in `at_slots` (R_N) seconds, `one_slot` (R_1) alone."""
    if at_slots + think <= 0:
        return math.nan
    return slots * (one_slot + think) / (at_slots + think)


def busy_share(references: Sequence[float], thinks: Sequence[float]) -> float:
    """a = R_1 / (R_1 + Z): the share of its time one slot is busy on a corpus whose turns take
    `references` seconds alone and wait `thinks` seconds before them (1 without think time)."""
    busy = sum(references)
    total = busy + sum(thinks)
    return busy / total if total > 0 else 1.0


def law_work(slots: int, turns: Sequence[TurnTimes], busy: float) -> StepWork:
    """The step as the estimator reads it: one cluster per turn id, credited busy × Σ r_1 and
    charged Σ (busy × r_N + (1 − busy) × r_1), so its capacity is busy × the law's gain."""
    work: dict[str, float] = {}
    spent: dict[str, float] = {}
    for turn in turns:
        work[turn.turn_id] = work.get(turn.turn_id, 0.0) + busy * turn.reference
        charged = busy * turn.response + (1.0 - busy) * turn.reference
        spent[turn.turn_id] = spent.get(turn.turn_id, 0.0) + charged
    return StepWork(slots, {k: ClusterWork(work[k], spent[k]) for k in work})


def law_gain(
    slots: int, step: Sequence[TurnTimes], busy: float, one_slot: Sequence[TurnTimes] = ()
) -> Ratio | None:
    """The step's gain over one slot by the law, with the standard error of its log from
    resampling turns; over `one_slot` (the one-slot runs' own turns, priced alike) where
    given, so how far those runs read from their references is in it too."""
    top = law_work(slots, step, busy)
    if not one_slot:
        bare = capacity_ratio([top], [])
        if bare is None:
            return None
        return Ratio(bare.value / busy, bare.log_se, bare.clusters) if busy > 0 else None
    return capacity_ratio([top], [law_work(1, one_slot, busy)])
