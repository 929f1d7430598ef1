"""A sweep's progress as plain lines: steps of the most the sweep may take, a range for the
time left, and per step the seconds replayed against its bounds and the turns served."""

from __future__ import annotations

import io

from msgspec.structs import replace
from rich.console import Console

from tests.support.slot_builders import make_step, runs_loop, same_answers
from vibey_gh.slots.measurement.live_progress import LiveProgress
from vibey_gh.slots.measurement.progress_lines import (
    LineProgress,
    SweepPlan,
    duration_text,
)

PLAN = SweepPlan(explicit=None, max_slots=4, done=0, min_step_s=60.0, max_step_s=300.0)


def test_the_most_steps_follow_the_order() -> None:
    assert PLAN.most_steps == 6, "1, 1, 2, 3, 4 and the closing 1"
    assert replace(PLAN, explicit=(1, 1, 4)).most_steps == 3
    assert PLAN.order_text() == "N = 1, 1, 2, 3, … up to 4, then 1 again"


def test_durations_read_at_a_glance() -> None:
    shown = [duration_text(s) for s in (0.5, 45, 135, 720, 12_600)]
    assert shown == ["0.5 s", "45 s", "2.2 min", "12 min", "3.5 h"]


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
        "sweep: N = 1, 1, 2, 3, … up to 4, then 1 again; a step serves every corpus turn once "
        "and measures 60 s–5 min; 2 steps already measured"
    )
    # nothing measured to scale from (the resumed steps' figures were not given): what ends
    # the step, never a guess
    assert lines[1] == (
        "step 2 (3 of at most 6): N=2; at least 60 s, until each of its 15 corpus turns was "
        "served once"
    )
    assert lines[2] == "  runner ready, model loaded in 1.5s"
    assert lines[3].startswith("  0 s replayed (min 60, max 300), 2960 turns served, ")
    assert "corpus 15/15 once" in lines[3] and "2966/15" not in lines[3]
    assert lines[4].startswith("  step 2 N=2: qualifies — 10 turns served in ")
    assert len(lines) == 5


def test_with_latency_factor_the_first_run_says_it_serves_the_reference() -> None:
    lines: list[str] = []
    progress = LineProgress(lines.append, every_s=0.0)
    progress.sweep_started(replace(PLAN, reference_passes=4))
    progress.step_started(0, 1, 1, 16)
    assert lines[1] == (
        "step 0 (1 of at most 6): N=1; at least 60 s, until each of its 16 corpus turns was "
        "served 4 times (the reference latency_factor is judged against)"
    )


def test_a_one_slot_run_of_an_interleaved_sweep_says_it_serves_the_corpus_once() -> None:
    lines: list[str] = []
    progress = LineProgress(lines.append, every_s=0.0)
    progress.sweep_started(replace(PLAN, closing=False, one_pass_runs=True))
    progress.step_started(0, 1, 1, 8)
    assert lines[1] == (
        "step 0 (1 of at most 5): N=1; until each of its 8 corpus turns was served once "
        "(no step's bar)"
    )


def test_an_interleaved_sweep_says_its_steps_above_one_slot_may_end_sooner() -> None:
    lines: list[str] = []
    progress = LineProgress(lines.append, every_s=0.0)
    progress.sweep_started(replace(PLAN, closing=False, first_look_s=30.0))
    assert lines[0].endswith("measures 60 s–5 min (an interleaved one from 30 s)")
    assert progress.step_detail(0, 0).endswith("(min 60, max 300), 0 turns served, corpus 0/0 once")
    progress.step_started(2, 2, 1, 8)
    assert "(min 30, max 300)" in progress.step_detail(0, 0)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def held_step_lines(progress: LineProgress, clock: Clock) -> None:
    """A 20–60 s step whose one pass over 60 corpus turns is at 41 turns after 105 s."""
    progress.sweep_started(replace(PLAN, min_step_s=20.0, max_step_s=60.0))
    progress.step_started(0, 1, 1, 60)
    progress.runner_ready(None)
    clock.now += 105.0
    progress.turn_done(41, 41, None)


def test_a_step_held_past_its_max_by_the_one_pass_says_so() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = LineProgress(lines.append, every_s=0.0, clock=clock)
    held_step_lines(progress, clock)
    assert lines[-1] == (
        "  105 s replayed (min 20, max 60; held for one pass: 41/60 turns), 41 turns served, "
        "memory —"
    )
    clock.now += 5.0
    progress.turn_done(60, 70, None)  # the pass is complete: nothing holds the step any more
    assert (
        lines[-1]
        == "  110 s replayed (min 20, max 60), 70 turns served, corpus 60/60 once, memory —"
    )


def test_within_its_max_a_step_shows_the_corpus_covered_not_a_hold() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = LineProgress(lines.append, every_s=0.0, clock=clock)
    progress.sweep_started(replace(PLAN, min_step_s=20.0, max_step_s=60.0))
    progress.step_started(0, 1, 1, 60)
    progress.runner_ready(None)
    clock.now += 59.0
    progress.turn_done(41, 41, None)
    assert (
        lines[-1]
        == "  59 s replayed (min 20, max 60), 41 turns served, corpus 41/60 once, memory —"
    )


def test_the_next_step_is_estimated_from_the_one_the_pass_held() -> None:
    """Step 0 took 135 s (its one pass held it past the 60 s cap): the next one-slot step is
    expected to take as long, and the sweep's low end is the steps it takes at least (the
    second one-slot run and two steps without a gain), never one step's minimum."""
    lines: list[str] = []
    clock = Clock()
    progress = LineProgress(lines.append, every_s=0.0, clock=clock)
    held_step_lines(progress, clock)
    clock.now += 30.0  # the step took 135 s in all
    step = make_step(0, 1, same_answers(), duration=120.0)
    step = replace(step, measurement={"start": 5.0, "end": 110.0})
    progress.step_finished(step, "floor")
    progress.step_started(1, 1, 1, 60)
    assert lines[-1].startswith("step 1 (2 of at most 6): N=1; about 2.2 min")
    left = progress.time_left()
    assert left is not None
    low, high = left
    assert low > 2 * 120.0, "three more steps at least: more than two of them"
    assert high >= low


def test_the_closing_one_slot_run_has_its_own_time_left() -> None:
    """After N=4 the sweep closes with one slot again: that step's line still gives the time
    left (its own), and the line of the step before counts it among the steps to come."""
    lines: list[str] = []
    clock = Clock()
    progress = LineProgress(lines.append, every_s=3600.0, clock=clock)
    progress.sweep_started(replace(PLAN, min_step_s=20.0, max_step_s=60.0))
    lefts = []
    for index, slots in enumerate((1, 1, 2, 3, 4)):
        progress.step_started(index, slots, 1, 60)
        lefts.append(progress.time_left())
        clock.now += 25.0
        step = make_step(index, slots, same_answers(), duration=24.0)
        progress.step_finished(replace(step, measurement={"start": 1.0, "end": 22.0}), "x")
    between = progress.time_left()
    progress.step_started(5, 1, 1, 60)
    closing = progress.time_left()
    assert "sweep time left" in lines[-1]
    assert closing is not None and between == closing, "only the closing run is left"
    assert 0 < closing[0] <= closing[1] and closing[1] >= 60.0, "at most its cap"
    during = lefts[-1]
    assert during is not None and during[0] > closing[0] and during[1] > 2 * 60.0, (
        "while N=4 runs, its own time and the closing run's are left"
    )


def _rendered(live: LiveProgress) -> str:
    console = Console(record=True, width=160, file=io.StringIO(), color_system=None)
    console.print(live.renderable())
    return console.export_text()


def test_the_live_table_shows_the_steps_the_running_step_and_the_time_left() -> None:
    """What the live view draws (rendered to a recording console, not timed): each measured
    step with its throughput, interval and verdict, then the running step against what ends
    it, its estimate, and the sweep's time left."""
    clock = Clock()
    out = io.StringIO()
    live = LiveProgress(clock=clock, console=Console(file=out, force_terminal=True, width=200))
    try:
        held_step_lines(live, clock)
        shown = _rendered(live)
        assert "step 0 N=1: at least 20 s, until each of its 60 corpus turns was served once" in (
            shown
        )
        assert "105 s replayed (min 20, max 60; held for one pass: 41/60 turns)" in shown
        clock.now += 30.0
        step = make_step(0, 1, same_answers(), duration=120.0)
        live.step_finished(replace(step, measurement={"start": 5.0, "end": 110.0}), "floor")
        live.step_started(1, 1, 1, 60)
        clock.now += 10.0
        shown = _rendered(live)
        row = next(line for line in shown.splitlines() if "floor" in line)
        cells = [cell.strip() for cell in row.strip("│ ").split("│")]
        assert cells == ["0", "1", "10", "300", "floor", "2.2 min"]
        assert "step 1 N=1: about 2.2 min" in shown
        left = [line for line in shown.splitlines() if line.startswith("sweep time left ")]
        assert len(left) == 1, "the time left, less what the running step has taken"
        assert "sweep N = 1, 1, 2, 3, … up to 4, then 1 again: 1 of at most 6" in shown
    finally:
        live.close()
    # what scrolled above the live view: the plain lines, as a log has them
    assert "step 0 N=1: floor — " in out.getvalue()


def test_off_a_terminal_only_plain_lines_are_written(capsys: object) -> None:
    from vibey_gh.slots.measurement.live_progress import PlainProgress, make_progress

    progress = make_progress(live=False)
    assert type(progress) is PlainProgress
    progress.sweep_started(PLAN)
    progress.step_started(0, 1, 1, 16)
    progress.close()
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert err.splitlines()[1] == (
        "step 0 (1 of at most 6): N=1; at least 60 s, until each of its 16 corpus turns was "
        "served once"
    )
    assert "\x1b" not in err, "no terminal codes in a log"


def test_a_step_of_whole_runs_says_how_many_it_completed() -> None:
    lines: list[str] = []
    progress = LineProgress(lines.append, every_s=0.0)
    progress.step_finished(runs_loop(2, 5, failed=frozenset({(0, 1)})), "qualifies")
    assert lines[-1].startswith(
        "  step 2 N=2: qualifies — 19 turns served (9 whole runs completed) in "
    )


def test_one_turn_is_one_turn() -> None:
    lines: list[str] = []
    progress = LineProgress(lines.append, every_s=0.0)
    progress.sweep_started(PLAN)
    progress.step_started(0, 1, 1, 1)
    progress.runner_ready(None)
    progress.turn_done(1, 1, None)
    assert "1 turn served" in lines[-1] and "1 turns" not in lines[-1]
    assert "each of its 1 corpus turn was served once" in lines[1]
