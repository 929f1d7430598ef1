"""A sweep's progress as plain lines: steps of the most the sweep may take, a range for the
time left, and per step the seconds replayed against its bounds and the turns served."""

from __future__ import annotations

from dataclasses import replace

from tests.support.slot_builders import make_step, runs_loop, same_answers
from vibey_gh.slots.measurement.progress_lines import (
    LineProgress,
    SweepPlan,
    duration_text,
    overhead_of,
)

PLAN = SweepPlan(explicit=None, max_slots=4, done=0, min_step_s=60.0, max_step_s=300.0)


def test_the_most_steps_follow_the_order() -> None:
    assert PLAN.most_steps == 5, "1, 1, 2, 3, 4"
    assert replace(PLAN, explicit=(1, 1, 4)).most_steps == 3
    assert PLAN.order_text() == "N = 1, 1, 2, 3, … up to 4"


def test_time_left_runs_from_one_short_step_to_every_step_at_its_cap() -> None:
    assert PLAN.time_left(0) == (60.0, 5 * 300.0)
    assert PLAN.time_left(3, overhead_s=20.0) == (80.0, 2 * 320.0)
    assert PLAN.time_left(5) == (0.0, 0.0)


def test_durations_read_at_a_glance() -> None:
    shown = [duration_text(s) for s in (0.5, 45, 720, 12_600)]
    assert shown == ["0.5 s", "45 s", "12 min", "3.5 h"]


def test_overhead_is_the_time_outside_the_measurement_window() -> None:
    step = make_step(0, 1, same_answers(), duration=100.0)
    windowed = replace(step, measurement={"start": 1010.0, "end": 1090.0})
    assert overhead_of([windowed]) == 20.0
    assert overhead_of([step]) == 0.0, "a step without a window tells nothing"


def test_one_line_per_event_never_a_turn_count_over_the_corpus() -> None:
    lines: list[str] = []
    progress = LineProgress(lines.append, every_s=0.0)
    progress.sweep_started(replace(PLAN, done=2))
    progress.step_started(2, 2, 1, 15)
    progress.runner_ready(1.5)
    progress.turn_done(2966, 2960, None)
    step = make_step(2, 2, same_answers(), duration=100.0)
    progress.step_finished(step, "qualifies")
    assert lines[0] == (
        "sweep: N = 1, 1, 2, 3, … up to 4; each step measured 60 s–5 min; "
        "2 step(s) already measured"
    )
    assert lines[1] == "step 2 (3 of at most 5): N=2; sweep time left 60 s–15 min"
    assert lines[2] == "  runner ready, model loaded in 1.5s"
    assert lines[3].startswith("  0 s replayed (min 60, max 300), 2960 turns served, ")
    assert "corpus 15/15 once" in lines[3] and "2966/15" not in lines[3]
    assert lines[4].startswith("  step 2 N=2: qualifies — 10 turns served in ")
    assert len(lines) == 5


def test_a_step_of_whole_runs_says_how_many_it_completed() -> None:
    lines: list[str] = []
    progress = LineProgress(lines.append, every_s=0.0)
    progress.step_finished(runs_loop(2, 5, failed=frozenset({(0, 1)})), "qualifies")
    assert lines[-1].startswith(
        "  step 2 N=2: qualifies — 19 turns served (9 whole runs completed) in "
    )
