"""A step's gain as the judge reads it: paired over the pooled one-slot runs, with how far one
slot's runs (the closing one too) strayed from each other, widened by the planned look the step
stopped at; evidence that cannot be paired is judged as before and says so."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from tests.slots.judging.test_steady_state import closed_loop
from tests.support.slot_builders import runs_loop
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.gains import interval_method
from vibey_gh.slots.judging.judge import judge_figures, judge_sweep
from vibey_gh.slots.judging.metrics import step_metrics
from vibey_gh.slots.judging.statistics.sequential import (
    first_look,
    look_confidence,
    look_times,
    widening,
)

BOUNDS = Bounds(min_gain=0.10, confidence=0.9)


def _noisy(lengths: list[float], scale: float) -> list[float]:
    return [x * scale for x in lengths]


# a turn's time varies by ±10% from pass to pass (the same ten turn ids cycle)
WOBBLE = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 0.92, 1.08, 1.02, 0.98, 1.1, 0.9]


def test_the_gain_is_paired_and_pooled_over_both_one_slot_runs() -> None:
    steps = [closed_loop(1, WOBBLE * 5, index=0), closed_loop(1, WOBBLE * 5, index=1)]
    steps.append(closed_loop(2, _noisy(WOBBLE * 5, 1.25), index=2))  # +60%
    judged = judge_sweep(steps, BOUNDS)
    two = judged.verdicts[2]
    assert two.metrics.paired and two.metrics.capacity_gain == pytest.approx(1.6, rel=0.02)
    assert two.gain_low is not None and two.gain_high is not None
    assert two.gain_low < 0.6 < two.gain_high and two.label == "qualifies"
    assert judged.figures.baseline.best_one_slot_batches == 10  # clusters: the ten turn ids


def test_a_closing_one_slot_run_that_strays_puts_the_runs_spread_in_every_gain() -> None:
    steps = [closed_loop(1, WOBBLE * 5, index=0), closed_loop(1, WOBBLE * 5, index=1)]
    steps.append(closed_loop(2, _noisy(WOBBLE * 5, 1.7), index=2))  # +18%
    before = judge_sweep(steps, BOUNDS).verdicts[2]
    slower = closed_loop(1, _noisy(WOBBLE * 5, 1.12), index=3)  # one slot 11% slower at the end
    judged = judge_sweep([*steps, slower], BOUNDS)
    after = judged.verdicts[2]
    drift = judged.figures.baseline.drift
    assert drift is not None and drift == pytest.approx(1 / 1.12 - 1, rel=0.05)
    assert judged.verdicts[3].label == "drift check"
    before_se, after_se = before.metrics.capacity_gain_se, after.metrics.capacity_gain_se
    assert before_se is not None and after_se is not None and after_se > 3 * before_se
    # the 18% the step read could be how far one slot strays between runs: not a gain
    assert before.qualifies and not after.qualifies and after.label == "inconclusive"
    assert "one slot read -10.7% at the end of the sweep" in judged.reason


def test_one_slot_runs_that_agree_add_nothing_to_the_gain() -> None:
    steps = [closed_loop(1, WOBBLE * 5, index=0), closed_loop(1, WOBBLE * 5, index=1)]
    steps.append(closed_loop(2, _noisy(WOBBLE * 5, 1.7), index=2))
    before = judge_sweep(steps, BOUNDS).verdicts[2]
    again = closed_loop(1, WOBBLE * 5, index=3)  # the closing run reads what the first two did
    after = judge_sweep([*steps, again], BOUNDS).verdicts[2]
    assert after.metrics.capacity_gain_se == pytest.approx(before.metrics.capacity_gain_se)
    assert after.qualifies


def test_evidence_without_a_steady_one_slot_run_is_judged_on_counted_turns() -> None:
    steps = [closed_loop(1, WOBBLE * 5, index=0), closed_loop(1, WOBBLE * 5, index=1)]
    steps.append(closed_loop(2, _noisy(WOBBLE * 5, 1.25), index=2))
    one_pass = [replace(s, measurement=None) for s in steps]
    judged = judge_sweep(one_pass, BOUNDS)
    assert not any(v.metrics.paired for v in judged.verdicts)
    assert judged.verdicts[2].metrics.capacity is None
    assert interval_method(judged.figures) == "batch means of counted turns"
    assert interval_method(judge_sweep(steps, BOUNDS).figures).startswith("paired with one slot")
    # steady steps without a one-slot run before them: judged as before, and marked so
    unpaired = judge_sweep([steps[2]], BOUNDS)
    assert "judged on counted turns" in unpaired.reason


def test_turns_never_served_at_one_slot_are_priced_by_the_cost_model_and_named() -> None:
    steps = [closed_loop(1, WOBBLE * 5, index=0), closed_loop(1, WOBBLE * 5, index=1)]
    two = closed_loop(2, _noisy(WOBBLE * 5, 1.25), index=2)
    renamed = tuple(replace(t, turn_id=f"new-{t.turn_id}") for t in two.turns)
    judged = judge_sweep([*steps, replace(two, turns=renamed)], BOUNDS)
    assert judged.figures.baseline.modelled_turns[:2] == ("new-t0", "new-t1")
    assert judged.verdicts[2].metrics.modelled_turns == 10
    assert "10 turn(s) never served at one slot were priced by the cost model" in judged.reason


def test_stored_paired_figures_read_back_and_judge_the_same() -> None:
    steps = [closed_loop(1, WOBBLE * 5, index=0), closed_loop(1, WOBBLE * 5, index=1)]
    steps.append(closed_loop(2, _noisy(WOBBLE * 5, 1.25), index=2))
    steps.append(closed_loop(1, WOBBLE * 5, index=3))
    figures = sweep_figures(steps)
    again = checked(as_json(figures), type(figures))
    assert again == figures
    assert judge_figures(again, BOUNDS).verdicts == judge_figures(figures, BOUNDS).verdicts


def test_planned_looks_spend_the_error_and_widen_early_intervals_most() -> None:
    assert look_times(60.0, 300.0) == [60.0, 120.0, 180.0, 240.0, 300.0]
    assert look_times(60.0, 60.0) == [60.0]
    assert look_times(60.0, 210.0) == [70.0, 140.0, 210.0]  # three minimums fit: even
    assert look_times(60.0, 500.0) == [100.0, 200.0, 300.0, 400.0, 500.0]
    # past the ordinary cap (a latency bound lengthened it) each look is twice the last
    assert look_times(4.0, 160.0, 20.0) == [4.0, 8.0, 12.0, 16.0, 20.0, 40.0, 80.0, 160.0]
    assert look_times(4.0, 100.0, 20.0)[-2:] == [80.0, 100.0]
    # an interleaved step looks once more, first, at half the minimum; no other step does
    assert first_look(60.0, 1.4) == 30.0 and first_look(60.0, None) is None
    assert first_look(60.0, 1.875) == 30.0 and first_look(60.0, 2.0) is None  # 8 pairs by then
    assert first_look(20.0, 7.0) is None  # the demo's blocks: eight pairs take 112 s
    assert look_times(60.0, 300.0, first=30.0) == [30.0, 60.0, 120.0, 180.0, 240.0, 300.0]
    assert look_times(60.0, 300.0, first=60.0) == look_times(60.0, 300.0)
    assert look_times(4.0, 160.0, 20.0, 2.0)[:2] == [2.0, 4.0]
    spent = [1 - look_confidence(0.9, j, 5) for j in range(1, 6)]
    assert sum(spent) == pytest.approx(0.1)  # the union bound: at most 1 − confidence in all
    assert widening(0.9, 1, 5) > widening(0.9, 5, 5) > 1.0
    assert widening(0.9, 0, 0) == 1.0  # evidence measured before planned looks
    steps = [closed_loop(1, WOBBLE * 5, index=0), closed_loop(1, WOBBLE * 5, index=1)]
    two = closed_loop(2, _noisy((WOBBLE[3:] + WOBBLE[:3]) * 5, 1.25), index=2)
    early = replace(two, measurement={**(two.measurement or {}), "look": 1, "looks": 5})
    plain = judge_sweep([*steps, two], BOUNDS).verdicts[2]
    looked = judge_sweep([*steps, early], BOUNDS).verdicts[2]
    assert plain.gain_low is not None and looked.gain_low is not None
    assert looked.gain_low < plain.gain_low


def test_runs_per_hour_has_an_interval_from_a_few_long_runs() -> None:
    # runs of 2 turns after 20 s of tools each: about 44 s a run, four runs a worker — far
    # fewer than the ten run cycles counted runs needed; paired, each run is a cluster and its
    # partial work counts
    one = [runs_loop(1, 7, think_s=20.0, index=i) for i in (0, 1)]
    two = runs_loop(2, 4, think_s=20.0, turn_s=1.1, index=2)
    assert not step_metrics(two).has_interval  # counted runs: no interval at all
    judged = judge_sweep([*one, two], BOUNDS)
    verdict = judged.verdicts[2]
    assert verdict.decided_by == "runs/h" and verdict.metrics.paired
    assert verdict.metrics.has_interval and verdict.metrics.run_batches >= 5
    assert verdict.runs_per_hour_low is not None and verdict.runs_per_hour_high is not None
    assert verdict.runs_per_hour_low < verdict.metrics.rate < verdict.runs_per_hour_high
