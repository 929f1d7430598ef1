"""Whether a first one-slot step can stand as evidence (pure)."""

from __future__ import annotations

from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.interfaces.slots_interface import REFUSED_OVER_WINDOW
from vibey_gh.slots.judging.truth.trust import untrustworthy_floor

OVER = answer(status=400, reason=None, error=REFUSED_OVER_WINDOW)


def test_a_clean_floor_can_be_evidence() -> None:
    assert untrustworthy_floor(make_step(0, 1, same_answers(16)), 16) is None


def test_failed_turns_are_counted_and_the_first_is_named() -> None:
    bad = answer(status=400, reason=None, error="http 400: Value looks like object")
    answers = same_answers(16)
    answers[3], answers[9], answers[12] = bad, OVER, bad
    reason = untrustworthy_floor(make_step(0, 1, answers), 16)
    assert reason is not None and "\n" not in reason
    assert reason.startswith("the first one-slot step failed 2 of 16 turns")
    assert "(first: t3: http 400: Value looks like object)" in reason


def test_a_timeout_or_a_turn_without_error_text_still_counts() -> None:
    answers = same_answers(4)
    answers[0] = answer(status=None, reason=None, error=None)
    reason = untrustworthy_floor(make_step(0, 1, answers), 4)
    assert reason is not None and "failed 1 of 4 turns (first: t0: no answer)" in reason


def test_over_window_refusals_up_to_a_quarter_are_fine() -> None:
    answers = same_answers(16)
    answers[:4] = [OVER] * 4
    assert untrustworthy_floor(make_step(0, 1, answers), 16) is None


def test_over_window_refusals_past_a_quarter_mean_the_corpus_does_not_fit() -> None:
    answers = same_answers(16)
    answers[:5] = [OVER] * 5
    reason = untrustworthy_floor(make_step(0, 1, answers), 16)
    assert reason is not None
    assert reason.startswith("the corpus does not fit this window: 5 of 16 turns were refused")
    assert "4096-token window" in reason
