"""Think time: how long a run spent outside the model before each of its turns (its tools).

From lane records: a "turn" event is written just before the request is sent and a "reply"
event just after the answer arrived, each with "mono" (monotonic seconds) and "t" (epoch
seconds). The think time of turn i is its first "turn" event minus the last "reply" event of
turn i − 1 — the lane reading files, running tests, waiting on a build. Monotonic seconds are
used where both events carry them (one lane runs in one process), else epoch seconds.

From transcripts: a message may carry a `timestamp` (epoch seconds, or an ISO 8601 time with
its offset). The think time of the turn that asks for the assistant message at position p is
the time of the message just before p minus the time of the assistant message before that —
the previous answer's end to this request. The `timestamp` field is not part of the chat
format, so it is taken off the messages a turn sends.

Turn 0 of a timed run has think time 0 (nothing of the run came before it); a turn whose
times are missing, or would be negative (a clock stepped back), has None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

TIMESTAMP_KEY = "timestamp"


def event_time(event: Mapping[str, object]) -> tuple[float | None, float | None]:
    """(monotonic, epoch) seconds of a lane event; None where absent or not a finite number."""
    return _finite(event.get("mono")), _finite(event.get("t"))


def gap(
    earlier: tuple[float | None, float | None] | None,
    later: tuple[float | None, float | None] | None,
) -> float | None:
    """Seconds from `earlier` to `later`, on the monotonic clock where both have it."""
    if earlier is None or later is None:
        return None
    for first, second in zip(earlier, later, strict=True):
        if first is not None and second is not None:
            seconds = second - first
            return seconds if seconds >= 0 else None
    return None


def lane_think_times(
    sent: Mapping[int, tuple[float | None, float | None]],
    answered: Mapping[int, tuple[float | None, float | None]],
    indices: Sequence[int],
) -> list[float | None]:
    """Think time of each turn in `indices`: from the last reply of the turn before to this
    turn's first send; 0 for turn 0 of a run whose records carry times."""
    timed = any(any(value is not None for value in times) for times in answered.values())
    return [
        (0.0 if timed and sent.get(0) is not None else None)
        if index == 0
        else gap(answered.get(index - 1), sent.get(index))
        for index in indices
    ]


def transcript_think_times(
    messages: Sequence[Mapping[str, object]], answers: Sequence[int]
) -> list[float | None]:
    """Think time of the turn that asks for each assistant message at the positions `answers`."""
    times = [message_time(message) for message in messages]
    if all(time is None for time in times):
        return [None] * len(answers)
    result: list[float | None] = []
    for turn, position in enumerate(answers):
        if turn == 0:
            result.append(0.0)
            continue
        before, previous = times[position - 1], times[answers[turn - 1]]
        result.append(gap((previous, None), (before, None)))
    return result


def without_timestamps(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """The messages as sent: a copy without `timestamp` where a message has one."""
    if not any(TIMESTAMP_KEY in message for message in messages):
        return messages
    return [{k: v for k, v in message.items() if k != TIMESTAMP_KEY} for message in messages]


def message_time(message: Mapping[str, object]) -> float | None:
    """A message's `timestamp` in epoch seconds; None when absent or unreadable."""
    value = message.get(TIMESTAMP_KEY)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        return moment.timestamp() if moment.tzinfo is not None else None
    return _finite(value)


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
