"""Runs on replay: which whole runs a step completed, when, and how long each took.

A worker replays one unit (a run, or a segment) start to finish before it takes the next, and
the last turn of a unit is recorded as closing it (`TurnRecord.closes`). So a worker's turns,
in the order it sent them, cut at each closing turn, are its units; a unit that never closed
was cut off by the end of the step and is not counted. A run is *completed* when it closed
and every turn of it was served. Its latency is from its first send to its last answer, the
think time between its turns (its tools) included — what a lane's user waits for.

Runs per hour count completed runs by when they ended, in the same measurement window and
with the same batch means as turns per hour (`metrics`), so their interval means the same.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import msgspec

from .figures import RUNS_PER_HOUR, TURNS_PER_HOUR
from .records import TurnRecord

RUNS = RUNS_PER_HOUR
TURNS = TURNS_PER_HOUR


class ReplayedRun(msgspec.Struct, frozen=True):
    """One unit a worker replayed to its end: first send, last answer, all served or not."""

    segment_id: str
    worker: int
    started: float
    ended: float
    served: bool

    @property
    def latency_s(self) -> float:
        return self.ended - self.started


def replayed_runs(turns: Sequence[TurnRecord]) -> list[ReplayedRun]:
    """Every unit that closed, per worker, in the order they ended."""
    by_worker: dict[int, list[TurnRecord]] = defaultdict(list)
    for turn in turns:
        by_worker[turn.worker].append(turn)
    runs: list[ReplayedRun] = []
    for worker, sent in by_worker.items():
        sent.sort(key=lambda t: t.result.started)
        first: TurnRecord | None = None
        served = True
        for turn in sent:
            if first is None or first.segment_id != turn.segment_id:
                first, served = turn, True
            served = served and turn.result.served
            if turn.closes:
                runs.append(
                    ReplayedRun(
                        turn.segment_id, worker, first.result.started, turn.result.ended, served
                    )
                )
                first = None
    return sorted(runs, key=lambda run: run.ended)


def completed_run_ends(turns: Sequence[TurnRecord], start: float, end: float) -> list[float]:
    """When each run completed (closed, every turn served) inside (start, end] ended."""
    return [r.ended for r in replayed_runs(turns) if r.served and start < r.ended <= end]


def figure_of(shape: str) -> str:
    """The figure a step of this corpus shape is decided on."""
    return RUNS if shape == "runs" else TURNS


def cluster_of(turn: TurnRecord, shape: str) -> str:
    """The unit the noise is resampled by: the run for a corpus of whole runs, else the turn."""
    return turn.segment_id if figure_of(shape) == RUNS else turn.turn_id
