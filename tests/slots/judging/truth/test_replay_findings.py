"""What a step's raw records show broken: failed served turns, forbidden log events during the
replay, answers without a done reason."""

from __future__ import annotations

from msgspec.structs import replace

from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.slots.judging.truth.fidelity import served_by_turn
from vibey_gh.slots.judging.truth.replay_findings import (
    failed_served_turns,
    log_findings,
    reasonless_answers,
)


def test_a_turn_served_at_one_slot_that_failed_is_named_with_why() -> None:
    reference = served_by_turn(make_step(0, 1, same_answers()))
    answers = same_answers()
    answers[3] = answer(status=500, reason=None, error="boom")
    step = make_step(2, 2, answers)
    assert failed_served_turns(step, reference) == ("t3 (boom)",)
    assert failed_served_turns(step, {}) == ()  # never served at one slot: not a finding


def test_forbidden_log_events_count_only_during_the_replay() -> None:
    step = make_step(2, 2, same_answers(), log_kinds=["oom", "oom", "eviction", "noise"])
    assert log_findings(step) == ("log: 1 × eviction", "log: 2 × out of memory")
    quiet = tuple(replace(e, during_replay=False) for e in step.log_events)
    assert log_findings(replace(step, log_events=quiet)) == ()


def test_an_answer_without_a_done_reason_is_counted_and_a_failed_request_is_not() -> None:
    answers = same_answers()
    answers[0] = answer(reason=None)
    answers[1] = answer(status=500, reason=None)
    assert reasonless_answers(make_step(2, 2, answers)) == 1
