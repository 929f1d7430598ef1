from __future__ import annotations

from dataclasses import replace

from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.slots.judging.bounds import Bounds
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.judging.sweep import sweep_steps


def drive(
    durations: dict[int, float], bounds: Bounds, explicit=None, broken_at=None
) -> tuple[list[int], str]:
    """Run the generator, answering each N with a step of the given duration."""
    gen = sweep_steps(lambda: bounds, explicit, max_slots=8)
    asked: list[int] = []
    slots = next(gen)
    try:
        while True:
            asked.append(slots)
            answers = same_answers()
            if broken_at is not None and slots == broken_at:
                answers[0] = answer("changed")
                answers[2] = answer("changed")
            step: StepRecord = make_step(
                len(asked) - 1, slots, answers, duration=durations.get(slots, 100.0)
            )
            slots = gen.send(step)
    except StopIteration as stop:
        return asked, str(stop.value)


def test_default_order_and_stop_on_broken_bound() -> None:
    asked, reason = drive({2: 50, 3: 30, 4: 20}, Bounds(), broken_at=3)
    assert asked == [1, 1, 2, 3]
    assert reason.startswith("stopped at 3 slots: fidelity")


def test_patience_stops_after_two_steps_without_gain() -> None:
    asked, reason = drive({2: 50, 3: 48, 4: 47, 5: 10}, Bounds())
    assert asked == [1, 1, 2, 3, 4]
    assert "without a 10% gain" in reason


def test_patience_is_re_read_from_bounds() -> None:
    asked, _ = drive({2: 50, 3: 48, 4: 47, 5: 46}, replace(Bounds(), patience=3))
    assert asked == [1, 1, 2, 3, 4, 5]


def test_explicit_list_is_followed_and_stop_rules_still_apply() -> None:
    asked, reason = drive({2: 50, 4: 25}, Bounds(), explicit=[1, 1, 2, 4])
    assert asked == [1, 1, 2, 4]
    assert reason == "every requested step was measured"
    asked, reason = drive({2: 50}, Bounds(), explicit=[1, 1, 2, 4], broken_at=2)
    assert asked == [1, 1, 2]


def test_max_slots_ends_a_sweep_that_keeps_gaining() -> None:
    durations = {n: 100.0 / n for n in range(2, 20)}
    asked, reason = drive(durations, Bounds())
    assert asked[-1] == 8
    assert "largest slot count" in reason
