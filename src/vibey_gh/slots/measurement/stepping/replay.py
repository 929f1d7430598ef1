"""Replay a corpus against a runner with N closed-loop workers, in a steady state.

A worker takes the next segment from a shared cursor that cycles through the corpus and sends
its turns in order, so it keeps its prefix warm exactly as a lane does; worker i starts at
segment i. Each turn is sent marked with its pass over the corpus (`passes`), so no pass is
served from the prompt cache an earlier one left. Workers keep taking segments until every
segment was taken once and `keep_going` says the step has measured enough; from then on each
worker stops at its next segment boundary (the first one to stop ends the measurement window),
and once every corpus turn has an answer the others stop after their turn in flight (the
drain is not measured).

Where the step is judged turn by turn (`by_turn`: its think policy waits, and its gains are read
by the closed-system law from each turn's response time, `judging.statistics.think_law`), a
step needs neither a whole pass nor whole runs: `keep_going` is asked before every turn, and
once it says enough every worker stops before its next turn — a worker waiting out a think
time at once — and the turns in flight are answered and recorded. With recorded tools a pass
at one slot takes hours; the law needs only turns, each against its own one-slot time.

Before each turn a worker waits the turn's think time (`think`, the run's tools on replay).
The wait is interruptible: a stop, an outside stop (`accept`) or the end of the drain wakes a
waiting worker at once, and an exception in the caller (a stop signal) stops every worker.

An interleaved step (`gate`, `block_gate`) sends every turn through its gate: in a
one-at-a-time block only worker 0 sends, in an N block all of them, and each turn records the
block it was sent in (a filler, sent while an N block's turns finish, is in none). Once the
step winds down the gate is released and the drain is in no block.

The driver records raw results with monotonic timestamps; it computes nothing. `check` is
called after every turn and may end the step early (its reason is returned); turns that finish
after that, or while `accept` says no (the runner was stopped to protect the machine), are not
recorded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from msgspec.structs import replace

from ....interfaces.slots_interface import ChatSettings
from ....runners.contract import RunningRunner
from ...corpus.corpus import Segment, Turn
from ...judging.records import TurnRecord
from .block_gate import FILLER, OUTSIDE, BlockGate
from .passes import Marks

# how often a waiting worker looks whether an outside stop (`accept`) came
_ACCEPT_POLL_S = 0.25


@dataclass
class ReplayOutcome:
    turns: list[TurnRecord] = field(default_factory=list)
    ended_early: str | None = None


def _one_pass(_turns: list[TurnRecord]) -> bool:
    return False


def _no_wait(_turn: Turn) -> float:
    return 0.0


class _Cursor:
    """Which segment comes next, and whether the step is winding down. Used under one lock."""

    def __init__(self, segments: Sequence[Segment]) -> None:
        self.segments = segments
        self.taken = 0
        self.finishing = False
        self.wanted = {t.id for s in segments for t in s.turns}
        self.answered: set[str] = set()

    @property
    def every_segment_taken(self) -> bool:
        return self.taken >= len(self.segments)

    @property
    def every_turn_answered(self) -> bool:
        return self.wanted <= self.answered

    def next_segment(self) -> tuple[Segment, int]:
        """The next segment and the pass over the corpus it is taken in (1 = the first)."""
        segment = self.segments[self.taken % len(self.segments)]
        pass_number = self.taken // len(self.segments) + 1
        self.taken += 1
        return segment, pass_number


def replay_corpus(
    runner: RunningRunner,
    segments: Sequence[Segment],
    workers: int,
    settings: ChatSettings,
    check: Callable[[list[TurnRecord]], str | None],
    on_turn: Callable[[TurnRecord], None] | None = None,
    accept: Callable[[], bool] = lambda: True,
    keep_going: Callable[[list[TurnRecord]], bool] = _one_pass,
    think: Callable[[Turn], float] = _no_wait,
    mark_passes: bool = True,
    by_turn: bool = False,
    gate: BlockGate | None = None,
) -> ReplayOutcome:
    """Replay until every segment was taken and `keep_going` is False (default: one pass);
        `by_turn`: until `keep_going`, asked before every turn, is False. `think`: seconds to wait
        before a turn (default none). `mark_passes`: send each turn marked with its pass (False
        only to show what the marks prevent, `bench/pass_bias.py`). `gate`: the interleaved
    step's blocks every turn is sent through (None: all workers send throughout)."""
    outcome = ReplayOutcome()
    cursor = _Cursor(segments)
    marks = Marks.of(segments)
    lock = threading.Lock()
    stop = threading.Event()
    # set with `stop`, and once the drain needs no more turns: ends every wait at once
    wake = threading.Event()

    def drained() -> bool:
        with lock:
            done = cursor.finishing and (by_turn or cursor.every_turn_answered)
        if done:
            wake.set()
        return done

    def wait(seconds: float) -> bool:
        """Wait `seconds`; False when woken to stop instead."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if wake.wait(min(left, _ACCEPT_POLL_S)) or not accept():
                return False
        return not stop.is_set()

    def enough_so_far() -> bool:
        """Measure on (`by_turn`): else the step winds down and waiting workers stop."""
        with lock:
            if not cursor.finishing and keep_going(outcome.turns):
                return True
            cursor.finishing = True
        wake.set()
        return False

    def take() -> tuple[Segment, int] | None:
        with lock:
            if not segments or stop.is_set():
                return None
            whole = cursor.every_segment_taken or by_turn
            if whole and (cursor.finishing or not keep_going(outcome.turns)):
                cursor.finishing = True
                if gate is not None:
                    gate.release()
                if by_turn or cursor.every_turn_answered:
                    wake.set()  # the drain needs no more turns: no one waits out a think time
                return None
            return cursor.next_segment()

    def work(worker: int) -> None:
        first = True
        while (taken := take()) is not None:
            segment, pass_number = taken
            if not mark_passes:
                pass_number = 0
            for position, turn in enumerate(segment.turns):
                if stop.is_set() or not accept() or drained():
                    return
                if by_turn and position > 0 and not enough_so_far():
                    return
                seconds = think(turn)
                # judged turn by turn, worker i first waits i/N of its run's mean think time
                # more, so the workers do not all send at once and stay in step for the first
                # cycles (their turns would read slower than in the steady state)
                extra = _stagger(segment, think, worker, workers) if by_turn and first else 0.0
                first = False
                if seconds + extra > 0 and (not wait(seconds + extra) or drained()):
                    return
                messages = turn.messages
                if pass_number:
                    messages = marks.marked(messages, pass_number)
                block = OUTSIDE
                if gate is not None:
                    block = gate.enter(worker, lambda: stop.is_set() or not accept())
                try:
                    if stop.is_set() or not accept():
                        return
                    result = runner.chat(messages, turn.tools or None, _capped(settings, turn))
                finally:
                    if gate is not None:
                        gate.leave(block)
                closes = position == len(segment.turns) - 1
                sent_in = OUTSIDE if block == FILLER else block
                record = TurnRecord(
                    turn.id, segment.id, worker, result, seconds, closes, pass_number, sent_in
                )
                with lock:
                    if stop.is_set() or not accept():
                        stop.set()
                        wake.set()
                        return
                    outcome.turns.append(record)
                    cursor.answered.add(turn.id)
                    if cursor.finishing and cursor.every_turn_answered:
                        wake.set()
                    if on_turn is not None:
                        on_turn(record)
                    reason = check(outcome.turns)
                    if reason is not None:
                        outcome.ended_early = reason
                        stop.set()
                        wake.set()
                        return

    crashes: list[BaseException] = []

    def guarded_work(worker: int) -> None:
        # A bug in a worker must end the step loudly: a step judged on the turns of the
        # workers that survived would measure fewer workers than it claims.
        try:
            work(worker)
        except BaseException as exc:
            with lock:
                crashes.append(exc)
            stop.set()
            wake.set()

    threads = [
        threading.Thread(target=guarded_work, args=(i,), name=f"replay-worker-{i}", daemon=True)
        for i in range(workers)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        # a stop signal in the caller: no worker sends another turn or waits out its think time
        stop.set()
        wake.set()
        if gate is not None:
            gate.release()
    if crashes:
        raise crashes[0]
    return outcome


def _stagger(segment: Segment, think: Callable[[Turn], float], worker: int, workers: int) -> float:
    """How much longer worker `worker` of `workers` waits before its first turn: its share of
    the mean think time of the run it starts with."""
    waits = [think(turn) for turn in segment.turns]
    return sum(waits) / len(waits) * worker / workers if waits else 0.0


def _capped(settings: ChatSettings, turn: Turn) -> ChatSettings:
    """The turn's own answer cap (a recorded answer's length) where it is below the step's."""
    if turn.max_tokens is None or turn.max_tokens >= settings.max_tokens:
        return settings
    return replace(settings, max_tokens=turn.max_tokens)


def stop_from_outside(outcome: ReplayOutcome, reason: str) -> None:
    """Record why a step was ended by something other than a turn (the sampler)."""
    if outcome.ended_early is None:
        outcome.ended_early = reason
