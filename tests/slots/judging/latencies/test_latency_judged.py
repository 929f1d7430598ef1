"""What `latency_factor` judges (run latency for whole runs, turn latency for segments), and a
p95 whose interval still straddles its limit once the step measured to its cap."""

from __future__ import annotations

import json
import random

from msgspec.structs import replace

from tests.support.latency import streamed, timed
from tests.support.slot_builders import answer, make_step, runs_loop, same_answers
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.figures import SweepFigures
from vibey_gh.slots.judging.judge import judge_figures, judge_sweep
from vibey_gh.slots.judging.latencies.latency import latency_figures
from vibey_gh.slots.judging.latencies.latency_bounds import (
    INCONCLUSIVE_AT_CAP,
    LONGER_AT_CAP,
    UNDECIDED_WHEN_ENDED,
    latency_findings,
    undecided_latency_bounds,
)
from vibey_gh.slots.judging.latencies.latency_figures import LatencyFigures
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.judging.statistics.sequential import look_confidence


def whole_runs(shape: str) -> list[StepRecord]:
    """Runs of two turns with 2 s of tools before each: turns take 1 s at one slot, 2 s at
    two. Turn latency doubles; run latency (tools included) goes from 4 s to 6 s, 1.5×."""
    steps = [runs_loop(1, 200, think_s=2.0, index=i, shape=shape) for i in (0, 1)]
    steps.append(runs_loop(2, 200, think_s=2.0, turn_s=2.0, index=2, shape=shape))
    return steps


def test_the_latency_factor_judges_run_latency_when_the_corpus_holds_whole_runs() -> None:
    judgement = judge_sweep(whole_runs("runs"), Bounds(latency_factor=1.8))
    two = judgement.verdict_for(2)
    assert two is not None and two.latency is not None and two.latency.whole_runs
    assert two.latency.judged[0] == "run"
    assert two.latency.run_p50_s is not None and abs(two.latency.run_p50_s - 6.0) < 1e-6
    assert two.inside_bounds and two.qualifies, two.broken
    strict = judge_sweep(whole_runs("runs"), Bounds(latency_factor=1.4)).verdict_for(2)
    assert strict is not None and not strict.inside_bounds
    assert strict.broken[0].startswith("latency_factor: p95 run latency 6 s, each run 1.50×")


def test_the_latency_factor_judges_turn_latency_for_a_corpus_of_segments() -> None:
    two = judge_sweep(whole_runs("segments"), Bounds(latency_factor=1.8)).verdict_for(2)
    assert two is not None and two.latency is not None and not two.latency.whole_runs
    assert two.latency.run is None
    assert not two.inside_bounds
    assert two.broken[0].startswith("latency_factor: p95 turn latency 2 s, each turn 2.00×")


def test_run_latency_survives_the_figures_round_trip_and_old_figures_read_as_turns() -> None:
    figures = sweep_figures(whole_runs("runs"))
    stored = checked(json.loads(json.dumps(as_json(figures))), SweepFigures)
    latency, made = stored.steps[2].latency, figures.steps[2].latency
    assert latency is not None and made is not None
    assert latency.whole_runs and latency.run is not None and latency.run == made.run
    assert judge_figures(stored, Bounds(latency_factor=1.4)).ideal == 1
    old = as_json(latency)
    for key in ("whole_runs", "run", "run_p50_s", "run_p95_s", "measured_to_cap"):
        old.pop(key)
    before = checked(old, LatencyFigures)
    assert not before.whole_runs and before.judged[0] == "turn" and not before.measured_to_cap


def straddling() -> tuple[list[StepRecord], float]:
    """One slot twice, then N=2 with a TTFT whose p95 interval is wide; and a limit between
    that p95 and its interval's upper end."""
    one = timed(make_step(0, 1, same_answers(100), steady=True), 0.2, 0.02, spread=0.001)
    again = timed(make_step(1, 1, same_answers(100), steady=True), 0.2, 0.02, spread=0.001)
    two = timed(make_step(2, 2, same_answers(200), steady=True), 0.3, 0.03, spread=0.001)
    latency = sweep_figures([one, again, two]).steps[2].latency
    assert latency is not None and latency.ttft is not None
    low, high = latency.ttft.interval(0.9)
    point = latency.ttft.value()
    assert low is not None and high is not None and point is not None and point < high
    return [one, again, two], (point + high) / 2


def with_measurement(step: StepRecord, **fields: object) -> StepRecord:
    return replace(step, measurement={**(step.measurement or {}), **fields})


def test_a_p95_still_straddling_at_the_cap_does_not_qualify_and_says_why() -> None:
    steps, limit = straddling()
    bounds = Bounds(ttft_p95_seconds=limit)
    below_cap = judge_sweep(steps, bounds).verdict_for(2)
    assert below_cap is not None and not below_cap.qualifies
    assert below_cap.broken[0].endswith(UNDECIDED_WHEN_ENDED)
    capped = [*steps[:2], with_measurement(steps[2], reached_cap=True)]
    at_cap = judge_sweep(capped, bounds)
    verdict = at_cap.verdict_for(2)
    assert verdict is not None and not verdict.qualifies and not verdict.inside_bounds
    assert verdict.broken[0].startswith("ttft_p95_seconds: p95 TTFT")
    said = f"may be above {limit:.3g} s, {INCONCLUSIVE_AT_CAP}: {LONGER_AT_CAP}"
    assert said in verdict.broken[0]
    assert at_cap.ideal == 1 and "ttft_p95_seconds" in at_cap.reason
    # the same figure clearly inside its limit is not refused at the cap
    clear = judge_sweep(capped, Bounds(ttft_p95_seconds=limit * 3)).verdict_for(2)
    assert clear is not None and clear.qualifies


def test_evidence_from_before_the_cap_was_recorded_reads_it_from_why_ended() -> None:
    steps, limit = straddling()
    old = with_measurement(steps[2], why_ended="inconclusive at max_step_seconds")
    verdict = judge_sweep([*steps[:2], old], Bounds(ttft_p95_seconds=limit)).verdict_for(2)
    assert verdict is not None and not verdict.inside_bounds
    minimum = with_measurement(steps[2], why_ended="the interval decided")
    below = judge_sweep([*steps[:2], minimum], Bounds(ttft_p95_seconds=limit)).verdict_for(2)
    assert below is not None and not below.inside_bounds
    assert INCONCLUSIVE_AT_CAP not in below.broken[0], "not at the cap: calibrate again"


def test_a_latency_bound_is_judged_at_the_planned_look_the_step_stopped_at() -> None:
    """A step that stopped at an early planned look spent only a small share of the error
    there: its latency interval is the wider one of that look, as its gain's is, so a limit
    the interval at the bare confidence clears is still undecided at look 1 of 5."""
    rng = random.Random(3)
    ttfts = {f"t{i}": [0.1 + 0.02 * i + rng.uniform(0, 0.05) for _ in range(12)] for i in range(16)}
    ids = [key for key, values in ttfts.items() for _ in values]
    results = [
        streamed(answer("x", started=float(n), ended=n + 1.0, output_tokens=8), ttft, 0.01)
        for n, ttft in enumerate(v for values in ttfts.values() for v in values)
    ]
    figures = latency_figures(results, None, turn_ids=ids)
    assert figures.ttft is not None and figures.ttft_by_turn is not None
    bare = Bounds().confidence
    early = look_confidence(bare, 1, 5)

    def high(confidence: float) -> float:
        assert figures.ttft is not None and figures.ttft_by_turn is not None
        ends = (figures.ttft.interval(confidence)[1], figures.ttft_by_turn.interval(confidence)[1])
        assert None not in ends
        return max(e for e in ends if e is not None)

    assert high(early) > high(bare)
    limit = (high(early) + high(bare)) / 2.0
    bounds = Bounds(ttft_p95_seconds=limit)
    assert latency_findings(figures, None, bounds) == []
    assert undecided_latency_bounds(figures, None, bounds, (1, 5)) == ["ttft_p95_seconds"]
    refused = latency_findings(figures, None, bounds, (1, 5))
    assert refused and UNDECIDED_WHEN_ENDED in refused[0]


def test_a_step_is_paired_with_the_one_slot_runs_before_it_not_the_closing_one() -> None:
    """A step measures on until its latency_factor is decided against the one-slot runs
    measured so far; a closing one-slot run twice as slow must not change what it was
    decided on."""
    steps = [
        timed(make_step(i, 1, same_answers(60), steady=True), 0.2, 0.02, spread=0.001)
        for i in (0, 1)
    ]
    steps.append(timed(make_step(2, 2, same_answers(120), steady=True), 0.3, 0.03, 0.001))
    closing = make_step(3, 1, same_answers(60), duration=200.0, steady=True)
    steps.append(timed(closing, 0.4, 0.04, spread=0.001))
    before = sweep_figures(steps[:3]).steps[2].latency
    after = sweep_figures(steps).steps[2].latency
    assert before is not None and after is not None and before.factor_per_turn is not None
    assert after.factor_per_turn == before.factor_per_turn
    pooled = judge_sweep(steps, Bounds(latency_factor=1.5)).verdict_for(2)
    alone = judge_sweep(steps[:3], Bounds(latency_factor=1.5)).verdict_for(2)
    assert pooled is not None and alone is not None and pooled.broken == alone.broken
