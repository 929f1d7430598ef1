"""Think times that cannot be true — negative, over a day, a clock that jumped, a session dated
9999 — are counted unknown, never replayed as a full think cap."""

from __future__ import annotations

from datetime import UTC, datetime

from vibey_gh.slots.corpus.sources.session_builder import SessionBuilder
from vibey_gh.slots.corpus.sources.think_time import (
    believable,
    lane_think_times,
    transcript_think_times,
)

DAY = 86_400.0


def test_only_zero_to_a_day_is_believed() -> None:
    assert [believable(s) for s in (0.0, 12.5, DAY)] == [0.0, 12.5, DAY]
    assert [believable(s) for s in (-0.001, DAY + 1, 1e9, None)] == [None] * 4


def test_a_lane_clock_that_jumps_or_steps_back_is_counted_unknown() -> None:
    sent = {0: (0.0, None), 1: (15.0, None), 2: (1e9, None), 3: (1e9 + 2, None)}
    answered = {0: (5.0, None), 1: (2e9, None), 2: (1e9 + 1, None)}
    thinks, untrue = lane_think_times(sent, answered, [0, 1, 2, 3])
    # turn 1 is 10 s; turn 2 was sent 1e9 s before turn 1's reply; turn 3 follows 1 s later
    assert thinks == [0.0, 10.0, None, 1.0]
    assert untrue == 1
    jumped = {0: (0.0, None), 1: (1e9, None)}
    assert lane_think_times(jumped, {0: (1.0, None)}, [0, 1]) == ([0.0, None], 1)


def test_a_transcript_with_a_day_long_gap_says_how_many() -> None:
    messages = [
        {"role": "user", "content": "u", "timestamp": 100.0},
        {"role": "assistant", "content": "a", "timestamp": 101.0},
        {"role": "tool", "content": "r", "timestamp": 101.0 + 2 * DAY},
        {"role": "assistant", "content": "b", "timestamp": 101.0 + 2 * DAY},
        {"role": "tool", "content": "r", "timestamp": 110.0 + 2 * DAY},
        {"role": "assistant", "content": "c"},
    ]
    assert transcript_think_times(messages, [1, 3, 5]) == ([0.0, None, 9.0], 1)


def test_a_session_dated_9999_has_no_think_time() -> None:
    builder = SessionBuilder("s")
    moments = [datetime(9999, 1, 1, tzinfo=UTC).timestamp(), None]
    for start in moments:
        at = start if start is not None else datetime(2026, 3, 2, tzinfo=UTC).timestamp()
        builder.add_input({"role": "user", "content": "u"}, at)
        builder.begin_answer(at + 1)
        builder.add_text("a", at + 1)
        builder.add_input({"role": "tool", "content": "r"}, at + 5)
        builder.begin_answer(at + 6)
        builder.add_text("b", at + 6)
    # each date gives a turn 4 s after the answer before it: believed in 2026, not in 9999
    thinks = [turn.think_s for turn in builder.turns]
    assert thinks[1] is None and thinks[-1] == 4.0
    assert builder.untrue_gaps == 2  # 9999's own gap, and the jump from 9999 back to 2026
