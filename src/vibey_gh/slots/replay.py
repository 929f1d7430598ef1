"""Replay a corpus against a runner with N closed-loop workers.

A worker takes the next segment from a shared queue and sends its turns in order, so it keeps
its prefix warm exactly as a lane does. The driver records raw results with monotonic
timestamps; it computes nothing. `check` is called after every turn and may end the step early
(its reason is returned); turns that finish after that, or while `accept` says no (the runner
was stopped to protect the machine), are not recorded.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..interfaces.slots_interface import ChatSettings, RunningRunner
from .corpus import Segment
from .records import TurnRecord


@dataclass
class ReplayOutcome:
    turns: list[TurnRecord] = field(default_factory=list)
    ended_early: str | None = None


def replay_corpus(
    runner: RunningRunner,
    segments: Sequence[Segment],
    workers: int,
    settings: ChatSettings,
    check: Callable[[list[TurnRecord]], str | None],
    on_turn: Callable[[TurnRecord], None] | None = None,
    accept: Callable[[], bool] = lambda: True,
) -> ReplayOutcome:
    outcome = ReplayOutcome()
    pending: queue.SimpleQueue[Segment] = queue.SimpleQueue()
    for segment in segments:
        pending.put(segment)
    lock = threading.Lock()
    stop = threading.Event()

    def work(worker: int) -> None:
        while not stop.is_set():
            try:
                segment = pending.get_nowait()
            except queue.Empty:
                return
            for turn in segment.turns:
                if stop.is_set() or not accept():
                    return
                result = runner.chat(turn.messages, turn.tools or None, settings)
                record = TurnRecord(turn.id, segment.id, worker, result)
                with lock:
                    if stop.is_set() or not accept():
                        stop.set()
                        return
                    outcome.turns.append(record)
                    if on_turn is not None:
                        on_turn(record)
                    reason = check(outcome.turns)
                    if reason is not None:
                        outcome.ended_early = reason
                        stop.set()
                        return

    threads = [
        threading.Thread(target=work, args=(i,), name=f"replay-worker-{i}", daemon=True)
        for i in range(workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcome


def stop_from_outside(outcome: ReplayOutcome, reason: str) -> None:
    """Record why a step was ended by something other than a turn (the sampler)."""
    if outcome.ended_early is None:
        outcome.ended_early = reason
