"""Step and sweep time estimates from the rule that ends a step and the steps measured."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from tests.support.slot_builders import make_step, same_answers
from vibey_gh.slots.measurement.estimates import (
    MeasuredStep,
    StepsAhead,
    cost_exponent,
    estimate_step,
    measured_step,
    overrun_s,
    reference_passes,
    steps_ahead,
    sweep_left,
)

# step 0 of the embedded demo on a busy machine: 124 s, of which 4 s start and load; its one
# pass over the corpus took 110 s (past the 60 s cap), its window 5–110 s
HELD = MeasuredStep(
    slots=1, took_s=124.0, replay_s=120.0, covered_s=110.0, window=(5.0, 110.0), served=20
)
# a window-bound step: 20 s measured, the pass over in 4 s
BRIEF = MeasuredStep(
    slots=1, took_s=22.0, replay_s=21.5, covered_s=4.0, window=(0.3, 20.5), served=76
)


def test_nothing_measured_estimates_nothing() -> None:
    assert estimate_step([], 1, 20.0, 60.0) is None
    assert sweep_left([], steps_ahead(None, 4, 0), 20.0, 60.0) is None


def test_the_same_step_again_takes_as_long_as_the_one_measured() -> None:
    for step in (HELD, BRIEF):
        estimate = estimate_step([step], 1, 20.0, 60.0)
        assert estimate is not None
        assert estimate.likely == pytest.approx(step.took_s, rel=0.02)
    held = estimate_step([HELD], 1, 20.0, 60.0)
    assert held is not None and held.pass_held


def test_a_one_slot_run_of_one_pass_is_estimated_at_its_pass_not_the_minimum() -> None:
    """A one-slot run that is no step's bar ends once it served the corpus: the 4 s pass of a
    run measured to its 20 s minimum, not the minimum again, and never the cap."""
    floored = estimate_step([BRIEF], 1, 20.0, 60.0)
    once = estimate_step([BRIEF], 1, 20.0, 60.0, one_pass=True)
    assert floored is not None and once is not None
    overhead = BRIEF.took_s - BRIEF.replay_s
    assert once.likely < 0.5 * floored.likely
    assert overhead + BRIEF.covered_s <= once.likely <= overhead + 1.5 * BRIEF.covered_s
    assert once.high < 20.0
    assert once.high > 1.05 * once.likely, "a pass may run a little slower than the last"
    ahead = steps_ahead(None, 2, 1, closes=False)
    left = sweep_left([BRIEF], ahead, 20.0, 60.0, one_pass_runs=True)
    plain = sweep_left([BRIEF], ahead, 20.0, 60.0)
    assert left is not None and plain is not None and left[0] < plain[0]


def test_a_pass_bound_step_at_two_slots_lies_between_scaling_and_saturation() -> None:
    estimate = estimate_step([HELD, HELD], 2, 20.0, 60.0)
    assert estimate is not None
    # α = 0: the pass halves (55 s) and holds the step, whose window may end at its 20 s
    # minimum this time (a tenth faster still: a shared machine's noise); α = 1: the pass is
    # as long
    assert estimate.low == pytest.approx(0.9 * (4.0 + 55.0) + 10.0)
    assert estimate.high == pytest.approx(4.0 + 110.0 + 20.0)
    assert estimate.low < estimate.likely < estimate.high


def test_two_slot_counts_measured_give_how_a_turns_cost_grows() -> None:
    scales = replace(HELD, slots=2, served=40)  # twice the turns in the same time
    saturated = replace(HELD, slots=2)  # the same turns in the same time
    assert cost_exponent([HELD]) is None
    assert cost_exponent([HELD, scales]) == pytest.approx(0.0)
    assert cost_exponent([HELD, saturated]) == pytest.approx(1.0)
    estimate = estimate_step([HELD, saturated], 3, 20.0, 60.0)
    assert estimate is not None and estimate.low == pytest.approx(0.9 * estimate.likely, rel=0.02)
    assert estimate.likely == pytest.approx(124.0, rel=0.05), "saturated: a pass as long"
    # the pass holds it past the cap: at most a turn more to drain
    assert estimate.likely < estimate.high < estimate.likely + 2 * 1.5 * HELD.turn_cost_s


def test_the_window_of_a_later_step_follows_the_latest_of_its_kind() -> None:
    long_bar = replace(BRIEF, window=(0.3, 40.3), replay_s=41.0, took_s=41.5)
    decided = replace(BRIEF, slots=2, served=150)
    estimate = estimate_step([long_bar, long_bar, decided], 3, 20.0, 60.0)
    assert estimate is not None
    assert estimate.likely < 30.0, "a step above one slot measures as the last one did"


def test_the_steps_ahead_are_the_planners_with_the_closing_one_slot_run() -> None:
    assert steps_ahead(None, 4, 2) == StepsAhead((2, 3, 4, 1), fewest=3, closing=True)
    first = steps_ahead(None, 4, 0, patience=2, streak=0)
    assert first.slots == (1, 1, 2, 3, 4, 1) and first.fewest == 5, "1, 1, two steps, closing"
    assert steps_ahead(None, 4, 3, patience=2, streak=1).fewest == 2
    # the closing run itself, or a streak that already stopped the sweep: only it is left
    assert steps_ahead(None, 4, 3, running=1) == StepsAhead((1,), fewest=1, closing=True)
    assert steps_ahead(None, 8, 4, patience=2, streak=2).slots == (1,)
    explicit = steps_ahead((1, 1, 4), 4, 1, patience=2, streak=0)
    assert explicit == StepsAhead((1, 4), fewest=2, closing=False), "a list is as given"
    assert steps_ahead(None, 1, 0).slots == (1, 1), "no larger step: no closing run"


def test_the_sweeps_low_end_is_the_steps_it_takes_at_least() -> None:
    low, high = sweep_left([BRIEF, BRIEF], steps_ahead(None, 4, 2), 20.0, 60.0) or (0.0, 0.0)
    step = estimate_step([BRIEF, BRIEF], 2, 20.0, 60.0)
    closing = estimate_step([BRIEF, BRIEF], 1, 20.0, 60.0)
    assert step is not None and closing is not None
    assert low > 2 * step.low + 0.9 * closing.low, "two steps and the closing run at least"
    # at most: every step to its cap, the closing run's included
    assert high >= 4 * 60.0


def test_a_step_may_run_to_its_cap_whatever_the_bars_window() -> None:
    """The one-slot bars stopped at their first look (2 s of 2–10 s); the first step above one
    slot ran to its 10 s cap on a busy machine (11 s in all). Its range must hold 11 s, and
    go no higher than the cap allows."""
    bar = MeasuredStep(
        slots=1, took_s=4.8, replay_s=4.5, covered_s=1.5, window=(0.4, 2.6), served=16
    )
    estimate = estimate_step([bar, bar], 2, 2.0, 10.0)
    assert estimate is not None
    assert estimate.low <= estimate.likely < 11.0 <= estimate.high
    overhead, drain, turn = 0.3, 4.5 - 2.6, 4.5 / 16
    assert overrun_s([bar], 2.0, 10.0) == pytest.approx(0.2)
    # at most: at α = 1 (a turn costs twice as much) the ramp, the cap, past it to a segment
    # boundary (a turn: longer than the bars' own 0.2 s overrun) and the drain
    most = overhead + 2 * 0.4 + 10.0 + 2 * turn + 2 * drain
    assert estimate.high == pytest.approx(most)


def test_the_closing_one_slot_run_is_the_one_slot_runs_again() -> None:
    """A pass-bound sweep: one slot 28 s, N=4 12 s (a pass a quarter as long). The closing
    one-slot run takes as long as the first ones did, not N=4 scaled back by a fitted α."""
    one = MeasuredStep(
        slots=1, took_s=28.0, replay_s=27.6, covered_s=27.0, window=(0.2, 27.2), served=16
    )
    three = MeasuredStep(
        slots=3, took_s=12.3, replay_s=12.0, covered_s=10.0, window=(0.3, 11.0), served=21
    )
    four = MeasuredStep(
        slots=4, took_s=12.7, replay_s=12.4, covered_s=8.0, window=(0.3, 11.5), served=29
    )
    estimate = estimate_step([one, one, three, four], 1, 2.0, 10.0)
    assert estimate is not None
    assert estimate.likely == pytest.approx(28.0, rel=0.02)
    assert estimate.low < 28.0 < estimate.high


def test_a_recorded_step_gives_its_figures() -> None:
    step = make_step(0, 1, same_answers(), duration=100.0)
    step = replace(step, measurement={"start": 10.0, "end": 90.0})
    figures = measured_step(step, took_s=104.0)
    assert figures is not None
    assert figures.replay_s == pytest.approx(100.0)
    assert figures.window == (10.0, 90.0)
    assert figures.took_s - figures.replay_s == pytest.approx(4.0)
    assert figures.served == len(step.turns)


def test_a_window_held_past_its_minimum_may_end_at_it_next_time() -> None:
    """Step 0 measured to its 60 s cap (its interval undecided on a busy machine); step 1,
    the same N, may end at its 20 s minimum: the range says so."""
    capped = replace(BRIEF, window=(0.3, 60.3), replay_s=61.0, took_s=61.4, served=194)
    estimate = estimate_step([capped], 1, 20.0, 60.0)
    assert estimate is not None
    assert estimate.likely == pytest.approx(61.4, rel=0.02)
    assert estimate.low == pytest.approx(21.4, rel=0.05)


# a one-slot reference run with latency_factor set: 4 s steps, a pass over the corpus in 4 s,
# measured on until it held every turn 4 times (a 16 s window, at the look at 16 s)
REFERENCE = MeasuredStep(
    slots=1, took_s=17.0, replay_s=16.6, covered_s=4.0, window=(0.3, 16.3), served=64
)


def test_one_slot_runs_before_the_steps_hold_the_reference_passes_and_a_closing_run_one() -> None:
    """With latency_factor set the one-slot runs before the steps are measured until each
    holds every turn four times: four passes at the least, where without it a window ends at
    its first look. A closing run stops at its first look: one pass, not the reference's."""
    held = estimate_step([REFERENCE], 1, 4.0, 20.0, passes=4)
    first_look = estimate_step([REFERENCE], 1, 4.0, 20.0)
    assert held is not None and first_look is not None
    assert held.likely == pytest.approx(REFERENCE.took_s, rel=0.02)
    assert held.low >= 0.9 * 4 * REFERENCE.covered_s
    assert first_look.low < 0.5 * held.low
    two = replace(REFERENCE, slots=2, served=100)
    closing = estimate_step([REFERENCE, REFERENCE, two], 1, 4.0, 20.0, passes=1)
    assert closing is not None
    assert closing.likely < 0.5 * REFERENCE.took_s < REFERENCE.took_s <= closing.high
    # no pass asked but latency_factor's: the latest one-slot run's window, as before
    as_before = estimate_step([REFERENCE, REFERENCE, two], 1, 4.0, 20.0)
    assert as_before is not None and as_before.likely == pytest.approx(held.likely)


def test_the_sweep_counts_the_reference_runs_still_to_come() -> None:
    ahead = steps_ahead(None, 3, 1)  # the second one-slot run, N = 2, 3 and the closing run
    assert ahead.slots == (1, 2, 3, 1)
    assert reference_passes(ahead, 4) == [4, None, None, 1]
    assert reference_passes(steps_ahead(None, 3, 0), 4) == [4, 4, None, None, 1]
    assert reference_passes(ahead, None) == [None] * 4
    assert reference_passes(steps_ahead((1, 1, 4), 4, 0), 4) == [4, 4, None]
    brief = replace(REFERENCE, window=(0.3, 4.3), replay_s=4.6, took_s=5.0, served=16)
    with_reference = sweep_left([brief], ahead, 4.0, 20.0, passes=4)
    without = sweep_left([brief], ahead, 4.0, 20.0)
    assert with_reference is not None and without is not None
    # at least three more passes of the second run, each a tenth faster at the low end
    assert with_reference[0] - without[0] == pytest.approx(0.9 * 3 * brief.covered_s, rel=0.05)
    assert with_reference[1] == pytest.approx(without[1]), "at most every step to its cap"


def test_an_interleaved_step_may_end_at_its_first_look_at_half_the_minimum() -> None:
    """A step above one slot that interleaves is first looked at at half the minimum: its
    low end is that much shorter; a one-slot run's is not, nor a step's that does not."""
    two = replace(BRIEF, slots=2, window=(0.3, 60.3), replay_s=61.0, took_s=61.4, served=300)
    plain = estimate_step([BRIEF, two], 2, 60.0, 300.0)
    sooner = estimate_step([BRIEF, two], 2, 60.0, 300.0, first_look_s=30.0)
    one_slot = estimate_step([BRIEF, two], 1, 60.0, 300.0, first_look_s=30.0)
    assert plain is not None and sooner is not None and one_slot is not None
    # and counted from its first block, as the replay starts: after no ramp
    assert sooner.low == pytest.approx(plain.low - 30.0 - two.window[0])
    assert sooner.high == plain.high and sooner.likely == plain.likely
    assert one_slot == estimate_step([BRIEF, two], 1, 60.0, 300.0)
    ahead = steps_ahead(None, 3, 2, closes=False)
    left = sweep_left([BRIEF, two], ahead, 60.0, 300.0, first_look_s=30.0)
    before = sweep_left([BRIEF, two], ahead, 60.0, 300.0)
    assert left is not None and before is not None and left[0] < before[0]
    # a window that stopped at that look did not overrun the one at the minimum
    assert overrun_s([replace(two, window=(0.3, 31.0))], 60.0, 300.0, None, 30.0) < 1.0
