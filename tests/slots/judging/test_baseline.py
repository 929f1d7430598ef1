"""From raw steps to figures: the one-slot baseline, each step's figures, early verdicts."""

from __future__ import annotations

from msgspec.structs import replace

from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.judging.baseline import baseline_of, early_verdict, sweep_figures
from vibey_gh.slots.judging.figures import Agreement, BaselineFigures

BOUNDS = Bounds()


def one_slot_pair(duration: float = 100.0) -> list:
    return [
        make_step(0, 1, same_answers(), duration=duration),
        make_step(1, 1, same_answers(), duration=duration),
    ]


def troubled_sweep() -> list:
    """N=2 fails a turn served at one slot; N=3 changes answers, logs, and leaves one reasonless."""
    failing = same_answers()
    failing[3] = answer(status=500, reason=None, error="http 500: boom")
    changed = same_answers()
    for i in (0, 2, 4):
        changed[i] = answer("plain now")
    changed[7] = answer("cut", reason=None, error="no done reason")
    return [
        *one_slot_pair(),
        make_step(2, 2, failing, duration=50),
        make_step(
            3, 3, changed, duration=40, log_kinds=["reload", "context_shift", "context_shift"]
        ),
    ]


def test_sweep_figures_mark_the_reference_and_collect_every_finding() -> None:
    figures = sweep_figures(troubled_sweep())
    assert [s.index for s in figures.steps] == [0, 1, 2, 3]
    assert [s.slots for s in figures.steps] == [1, 1, 2, 3]
    assert [s.is_reference for s in figures.steps] == [True, False, False, False]

    reference, second, two, three = figures.steps
    assert reference.agreement is None
    assert (reference.failed_served, reference.log_findings, reference.reasonless) == ((), (), 0)
    # the second one-slot run equals the first, though it is not the same record
    assert second.agreement == Agreement(10, 10, 10, ())
    assert (second.failed_served, second.log_findings, second.reasonless) == ((), (), 0)

    assert two.failed_served == ("t3 (http 500: boom)",)
    assert two.agreement == Agreement(9, 9, 9, ())  # t3 was not served at N=2
    assert (two.log_findings, two.reasonless) == ((), 0)

    assert three.failed_served == ("t7 (no done reason)",)
    assert three.agreement == Agreement(9, 6, 6, ("t0", "t2", "t4"))
    assert three.log_findings == ("log: 2 × context shift", "log: 1 × model reload")
    assert three.reasonless == 1

    assert replace(figures.baseline, best_one_slot_latency=None) == BaselineFigures(1.0, 360.0, 0.0)
    one_slot = figures.baseline.best_one_slot_latency
    assert one_slot is not None and one_slot.value() == 10.0  # each turn took 10 s
    assert three.metrics.turns_per_hour == 9 * 3600.0 / 40


def test_one_slot_findings_are_figures_too_whatever_the_judge_makes_of_them() -> None:
    odd = same_answers()
    odd[5] = answer("cut", reason=None)
    steps = [make_step(0, 1, same_answers()), make_step(1, 1, odd, log_kinds=["oom"])]
    second = sweep_figures(steps).steps[1]
    assert second.failed_served == ("t5 (None)",)
    assert second.log_findings == ("log: 1 × out of memory",)
    assert second.reasonless == 1


def test_replay_log_events_only_count_during_the_replay() -> None:
    step = make_step(2, 2, same_answers(), log_kinds=["truncation", "eviction"])
    events = (replace(step.log_events[0], during_replay=False), step.log_events[1])
    figures = sweep_figures([*one_slot_pair(), replace(step, log_events=events)])
    assert figures.steps[2].log_findings == ("log: 1 × eviction",)


def test_the_baseline_takes_the_worse_swap_and_the_better_throughput() -> None:
    changed = same_answers()
    changed[0] = answer("plain now")
    steps = [
        make_step(0, 1, same_answers(), duration=100, swap_mb=10.0),
        make_step(1, 1, changed, duration=80, swap_mb=30.0),
    ]
    base = sweep_figures(steps).baseline
    assert base.best_one_slot_turns_per_hour == 10 * 3600.0 / 80
    assert abs(base.one_slot_swap_mb_per_min - 30.0) < 1e-6
    assert base.self_agreement == 0.9


def test_without_a_one_slot_run_nothing_is_the_reference() -> None:
    figures = sweep_figures([make_step(0, 2, same_answers(), duration=50)])
    assert figures.baseline == BaselineFigures(1.0, 0.0, 0.0)
    (step,) = figures.steps
    assert not step.is_reference
    assert step.agreement == Agreement(0, 0, 0, ())
    assert step.failed_served == ()


def test_early_verdict_is_certain_only_once_fidelity_cannot_recover() -> None:
    # 40 comparable turns, threshold 0.95: two changed answers can still pass, three cannot
    baseline = baseline_of([make_step(0, 1, same_answers(40)), make_step(1, 1, same_answers(40))])
    ids = [f"t{i}" for i in range(40)]
    so_far: list = [None] * 40
    so_far[0] = answer("text")
    so_far[2] = answer("text")
    assert early_verdict(2, so_far, ids, baseline, BOUNDS, ids, None, None) is None
    so_far[4] = answer("text")
    reason = early_verdict(2, so_far, ids, baseline, BOUNDS, ids, None, None)
    assert reason is not None and reason.startswith("fidelity")
    assert early_verdict(1, so_far, ids, baseline, BOUNDS, ids, None, None) is None


def test_early_verdict_on_memory_and_failed_served_turn() -> None:
    baseline = baseline_of(one_slot_pair())
    ids = [f"t{i}" for i in range(10)]
    nothing: list = [None] * 10
    memory = early_verdict(2, nothing, ids, baseline, BOUNDS, ids, int(20e9), int(24e9))
    assert memory is not None and memory.startswith("memory")
    failed = list(nothing)
    failed[4] = answer(status=500, reason=None, error="http 500: boom")
    reason = early_verdict(2, failed, ids, baseline, BOUNDS, ids, None, None)
    assert reason is not None and "t4" in reason
