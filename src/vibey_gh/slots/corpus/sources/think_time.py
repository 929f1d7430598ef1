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
times are missing has None. So has a turn whose think time cannot be true — negative (a clock
stepped back) or over a day (a clock that jumped; `think_cap` would idle it at replay all the
same), and in a session log (ISO dates) one between times outside the years a recording comes
from (a session dated 9999). Such turns are counted, so the corpus says how many it took for
unknown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

from ....interfaces.think import MAX_THINK_S

TIMESTAMP_KEY = "timestamp"
# the years a recorded time may fall in: 2000-01-01 to 2100-01-01 (UTC)
EARLIEST_S = 946_684_800.0
LATEST_S = 4_102_444_800.0
Times = tuple[float | None, float | None]


def believable(seconds: float | None) -> float | None:
    """A think time as it is when it can be true (0 to a day), else None."""
    return seconds if seconds is not None and 0.0 <= seconds <= MAX_THINK_S else None


def untrue(seconds: float | None) -> bool:
    """A think time that was measured but cannot be true."""
    return seconds is not None and believable(seconds) is None


def dated_untrue(*moments: float | None) -> bool:
    """Whether any of these epoch times lies outside the years a recording comes from (for
    dated records only: transcripts and lane records may count from any epoch)."""
    return any(m is not None and not EARLIEST_S <= m < LATEST_S for m in moments)


def event_time(event: Mapping[str, object]) -> tuple[float | None, float | None]:
    """(monotonic, epoch) seconds of a lane event; None where absent or not a finite number."""
    return _finite(event.get("mono")), _finite(event.get("t"))


def gap(earlier: Times | None, later: Times | None) -> float | None:
    """Seconds from `earlier` to `later`, on the monotonic clock where both have it, as
    measured (it may be negative or absurd: see `believable`)."""
    if earlier is None or later is None:
        return None
    for first, second in zip(earlier, later, strict=True):
        if first is not None and second is not None:
            return second - first
    return None


def lane_think_times(
    sent: Mapping[int, Times], answered: Mapping[int, Times], indices: Sequence[int]
) -> tuple[list[float | None], int]:
    """Think time of each turn in `indices`: from the last reply of the turn before to this
    turn's first send; 0 for turn 0 of a run whose records carry times. And how many turns'
    think time could not be true (left None)."""
    timed = any(any(value is not None for value in times) for times in answered.values())
    result: list[float | None] = []
    untrue_count = 0
    for index in indices:
        if index == 0:
            result.append(0.0 if timed and sent.get(0) is not None else None)
            continue
        earlier, later = answered.get(index - 1), sent.get(index)
        seconds = gap(earlier, later)
        if untrue(seconds):
            untrue_count += 1
            seconds = None
        result.append(seconds)
    return result, untrue_count


def transcript_think_times(
    messages: Sequence[Mapping[str, object]], answers: Sequence[int]
) -> tuple[list[float | None], int]:
    """Think time of the turn that asks for each assistant message at the positions `answers`,
    and how many could not be true (left None)."""
    times = [message_time(message) for message in messages]
    if all(time is None for time in times):
        return [None] * len(answers), 0
    result: list[float | None] = []
    untrue_count = 0
    for turn, position in enumerate(answers):
        if turn == 0:
            result.append(0.0)
            continue
        before, previous = times[position - 1], times[answers[turn - 1]]
        seconds = gap((previous, None), (before, None))
        if untrue(seconds):
            untrue_count += 1
            seconds = None
        result.append(seconds)
    return result, untrue_count


def untrue_note(count: int, where: str) -> list[str]:
    """The note a source gives for the turns whose think time it took for unknown."""
    if not count:
        return []
    return [
        f"{where}: {count} turn(s) whose think time cannot be true (negative, over a day, or "
        "dated outside 2000-2099) are counted unknown"
    ]


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
