"""Whole runs on replay as pure functions: which runs completed, runs per hour in the window
with its interval, run latency with the tool time, and a sweep decided on runs per hour."""

from __future__ import annotations

import json

import pytest

from tests.support.slot_builders import runs_loop
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.figures import StepMetrics, SweepFigures
from vibey_gh.slots.judging.judge import judge_figures, judge_sweep
from vibey_gh.slots.judging.metrics import decisive_ends, step_metrics
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.judging.runs import completed_run_ends, replayed_runs


def test_a_run_completes_when_its_closing_turn_ends_and_every_turn_was_served() -> None:
    step = runs_loop(2, 5, think_s=0.5, failed=frozenset({(1, 2)}))
    runs = replayed_runs(step.turns)
    assert len(runs) == 10
    # 2 turns of 1 s, 0.5 s of tools before the second: 2.5 s from first send to last answer
    assert {round(run.latency_s, 6) for run in runs} == {2.5}
    assert [run.served for run in runs].count(False) == 1
    # every worker's first run ends at 3 s (0.5 s before the first turn is not the run's)
    assert completed_run_ends(step.turns, 0.0, 3.0) == [3.0, 3.0]


def test_a_run_cut_off_by_the_end_of_the_step_is_not_counted() -> None:
    step = runs_loop(1, 3)
    cut = tuple(t for t in step.turns if t.result.ended < 6.0)  # the third run's last turn lost
    assert [run.ended for run in replayed_runs(cut)] == [2.0, 4.0]


def test_a_step_of_runs_is_decided_on_runs_per_hour_with_its_interval() -> None:
    metrics = step_metrics(runs_loop(2, 40, think_s=1.0))
    assert metrics.decided_by == "runs/h" and metrics.on_runs
    # a run: 2 turns of 1 s, each after 1 s of tools: 4 s; the window is from the first send
    # (1 s) to the last answer (160 s), 40 runs of each worker in it
    assert (metrics.window_start, metrics.window_end) == (1.0, 160.0)
    assert metrics.window_runs == 80
    # each worker always inside a 4 s cycle: 2 workers complete 2 / 4 s, the response-time law
    assert metrics.runs_per_hour == pytest.approx(2 * 3600 / 4.0)
    assert metrics.turns_per_hour == pytest.approx(160 * 3600 / 159)
    assert metrics.rate == metrics.runs_per_hour
    assert metrics.run_batches == 10 and metrics.has_interval
    low, high = metrics.interval(0.9)
    assert low <= metrics.runs_per_hour <= high and high < metrics.turns_per_hour
    assert metrics.run_p50_s == pytest.approx(3.0) and metrics.run_p95_s == pytest.approx(3.0)
    # the same step stored and read back keeps every run figure
    assert checked(json.loads(json.dumps(as_json(metrics))), StepMetrics) == metrics


def test_a_step_of_segments_is_decided_on_turns_per_hour_as_before() -> None:
    metrics = step_metrics(runs_loop(2, 40, shape="segments"))
    assert metrics.decided_by == "turns/h" and metrics.runs_per_hour is None
    assert metrics.rate == metrics.turns_per_hour
    step = runs_loop(1, 10, shape="segments")
    assert decisive_ends(step.turns, 0.0, 100.0, "segments") == [float(i) for i in range(1, 21)]
    assert decisive_ends(step.turns, 0.0, 100.0, "runs") == [float(i) for i in range(2, 21, 2)]


def test_figures_of_older_evidence_read_as_turns_per_hour() -> None:
    stored = as_json(step_metrics(runs_loop(1, 20, shape="segments")))
    for key in ("decided_by", "runs_per_hour", "run_batches", "run_p50_s", "window_runs"):
        stored.pop(key)
    assert checked(stored, StepMetrics).decided_by == "turns/h"


def sweep(turn_s_at: dict[int, float], think_s: float) -> list[StepRecord]:
    """A sweep of whole runs: one slot twice, then each N in `turn_s_at` with its turn time."""
    steps = [runs_loop(1, 60, think_s=think_s, index=i) for i in (0, 1)]
    for index, (slots, turn_s) in enumerate(turn_s_at.items(), start=2):
        steps.append(runs_loop(slots, 60, think_s=think_s, turn_s=turn_s, index=index))
    return steps


def test_a_sweep_of_runs_gains_and_chooses_on_runs_per_hour() -> None:
    # tools take as long as a turn: two slots double the runs per hour, a third adds little
    steps = sweep({2: 1.0, 3: 2.0}, think_s=1.0)
    judgement = judge_sweep(steps, Bounds())
    assert judgement.figures.decided_by == "runs/h"
    assert [v.decided_by for v in judgement.verdicts] == ["runs/h"] * 4
    two = judgement.verdict_for(2)
    assert two is not None and two.qualifies and two.gain == pytest.approx(1.0)
    assert two.runs_per_hour_low is not None and two.rate_low == two.runs_per_hour_low
    assert judgement.ideal == 2 and "runs/h" in judgement.reason
    stored = checked(json.loads(json.dumps(as_json(sweep_figures(steps)))), SweepFigures)
    assert judge_figures(stored, Bounds()).ideal == 2
    assert stored.baseline.best_rate == pytest.approx(judgement.figures.baseline.best_rate)


def test_runs_per_hour_is_work_done_not_runs_counted() -> None:
    # at three slots the runs take three turns each instead of two: fewer runs complete, but
    # each holds more work; paired, runs/h is capacity per run's reference cost, so the extra
    # work counts (a corpus is the same at every N; here it is not, to tell the two apart)
    steps = sweep({2: 1.0}, think_s=0.0)
    longer = runs_loop(3, 60, turns_per_run=3, turn_s=1.2, index=3)
    judgement = judge_sweep([*steps, longer], Bounds())
    two, three = judgement.verdict_for(2), judgement.verdict_for(3)
    assert two is not None and three is not None
    assert three.metrics.counted_turns_per_hour is not None
    assert two.metrics.counted_turns_per_hour is not None
    assert three.metrics.counted_turns_per_hour > two.metrics.counted_turns_per_hour
    # 3 workers at 1 s of reference work per 1.2 s: 2.5 slots' work; 2 workers at full speed: 2
    assert three.metrics.capacity == pytest.approx(2.5)
    assert two.metrics.capacity == pytest.approx(2.0)
    assert three.metrics.rate / two.metrics.rate == pytest.approx(1.25)
    assert three.metrics.modelled_turns > 0  # the third turns were never served at one slot
