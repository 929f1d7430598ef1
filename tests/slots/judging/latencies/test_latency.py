"""Latency figures and bounds: TTFT, ITL and p95s as pure functions of recorded turns, the
distribution-free interval of a quantile, and bounds that refuse a step only on evidence."""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from tests.support.latency import streamed, timed
from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.errors import MalformedJson
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked, checked_at
from vibey_gh.interfaces.turns import TurnResult
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.figures import SweepFigures
from vibey_gh.slots.judging.judge import judge_figures
from vibey_gh.slots.judging.latencies.latency import (
    decode_tokens_per_s,
    latency_figures,
    tpot_s,
    ttft_s,
)
from vibey_gh.slots.judging.latencies.latency_bounds import (
    UNDECIDED_WHEN_ENDED,
    factor_interval,
    latency_findings,
)
from vibey_gh.slots.judging.latencies.latency_figures import (
    UNSTREAMED,
    LatencyFigures,
    QuantileSample,
)
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.judging.statistics.stats import quantile_ranks


def test_ttft_and_tpot_of_a_streamed_turn() -> None:
    turn = streamed(answer("x", started=10.0, ended=12.0, output_tokens=11), 0.5, 0.1)
    assert ttft_s(turn) == pytest.approx(0.5)
    assert tpot_s(turn) == pytest.approx(0.1)
    assert decode_tokens_per_s(turn) == pytest.approx(10.0)


def test_an_unstreamed_turn_has_no_token_timing() -> None:
    turn = answer("x")
    assert ttft_s(turn) is None and tpot_s(turn) is None and decode_tokens_per_s(turn) is None


def test_one_chunk_shows_no_gap() -> None:
    turn = replace(answer("x"), streamed=True, first_token=0.2, last_token=0.2, token_chunks=1)
    assert ttft_s(turn) == pytest.approx(0.2) and tpot_s(turn) is None


def test_old_turns_without_timing_still_read() -> None:
    old = {
        "status": 200,
        "finish_reason": "stop",
        "prompt_tokens": 3,
        "output_tokens": 2,
        "text": "hi",
        "tool_calls": [],
        "started": 1.0,
        "ended": 2.0,
        "error": None,
    }
    result = checked(old, TurnResult)
    assert not result.streamed and result.first_token is None
    assert as_json(answer("x")) == {**as_json(answer("x"))}  # no timing keys when unstreamed
    assert "first_token" not in as_json(answer("x"))
    again = checked(as_json(streamed(answer("x"), 0.1, 0.01)), TurnResult)
    assert again.streamed and again.first_token == pytest.approx(0.1)


def test_quantile_ranks_match_the_binomial_tables() -> None:
    assert quantile_ranks(100, 0.5, 0.95) == (40, 61)
    low, high = quantile_ranks(1000, 0.95, 0.90)
    assert low is not None and high is not None and low < 950 < high
    # a p95 of 20 values has no upper end at 90%: the sample is too small
    assert quantile_ranks(20, 0.95, 0.90)[1] is None


def test_the_quantile_interval_covers_the_true_p95_as_often_as_it_says() -> None:
    rng = random.Random(7)
    true_p95 = 2.9957  # of the exponential with mean 1: -ln(0.05)
    misses = 0
    trials = 400
    for _ in range(trials):
        sample = QuantileSample.of([rng.expovariate(1.0) for _ in range(200)])
        assert sample is not None
        low, high = sample.interval(0.90)
        assert low is not None and high is not None
        misses += not (low <= true_p95 <= high)
    assert misses / trials <= 0.10 + 0.04  # at most 10% missed, with room for chance


def test_figures_count_the_turns_of_the_measurement_window() -> None:
    step = timed(make_step(2, 2, same_answers(40), steady=True), 0.2, 0.05, spread=0.01)
    figures = latency_figures([t.result for t in step.turns], (10.0, 50.0))
    assert 0 < figures.turns < 40 and figures.timed == figures.turns
    assert figures.ttft is not None and figures.ttft_p50_s is not None
    assert figures.tpot_p50_s == pytest.approx(0.05)
    assert figures.missing is None


def test_unstreamed_evidence_has_turn_latency_but_no_ttft() -> None:
    step = make_step(2, 2, same_answers(10))
    figures = latency_figures([t.result for t in step.turns], None)
    assert figures.latency is not None and figures.ttft is None
    assert figures.missing == UNSTREAMED


def steps(ttft_at_two: float, latency_stretch: float = 1.0) -> list[StepRecord]:
    one = timed(make_step(0, 1, same_answers(100), steady=True), 0.2, 0.02, spread=0.001)
    again = timed(make_step(1, 1, same_answers(100), steady=True), 0.2, 0.02, spread=0.001)
    two = make_step(
        2, 2, same_answers(200), steady=True, duration=100.0 * latency_stretch
    )  # twice the turns in the same time: a gain
    return [one, again, timed(two, ttft_at_two, 0.03, spread=0.001)]


def test_a_ttft_bound_refuses_a_step_shown_above_it_and_says_which_bound_decided() -> None:
    figures = sweep_figures(steps(ttft_at_two=2.0))
    free = judge_figures(figures, Bounds())
    assert free.ideal == 2
    bounded = judge_figures(figures, Bounds(ttft_p95_seconds=1.0))
    two = bounded.verdict_for(2)
    assert two is not None and two.label == "breaks ttft_p95_seconds"
    assert two.broken[0].startswith("ttft_p95_seconds: p95 TTFT")
    assert bounded.ideal == 1 and "ttft_p95_seconds" in bounded.reason


def test_a_p95_whose_interval_reaches_the_limit_is_refused_saying_what_would_decide_it() -> None:
    figures = sweep_figures(steps(ttft_at_two=0.3))
    two = figures.steps[2].latency
    assert two is not None and two.ttft is not None
    low, high = two.ttft.interval(0.9)
    assert low is not None and high is not None
    point = two.ttft.value()
    assert point is not None and low < point < high
    # the interval reaches above the limit, the p95 itself does not: undecided, so refused
    above_point = judge_figures(figures, Bounds(ttft_p95_seconds=(point + high) / 2))
    verdict = above_point.verdict_for(2)
    assert verdict is not None and not verdict.inside_bounds and not verdict.qualifies
    assert verdict.broken[0].startswith("ttft_p95_seconds: p95 TTFT")
    assert verdict.broken[0].endswith(UNDECIDED_WHEN_ENDED)
    assert above_point.ideal == 1
    # the p95 itself above the limit, its interval reaching below: refused as above
    below_point = judge_figures(figures, Bounds(ttft_p95_seconds=(low + point) / 2))
    verdict = below_point.verdict_for(2)
    assert verdict is not None and not verdict.inside_bounds
    assert verdict.broken[0].endswith("(its interval reaches below)")
    clear = judge_figures(figures, Bounds(ttft_p95_seconds=high * 1.01)).verdict_for(2)
    assert clear is not None and clear.inside_bounds and not clear.broken


def test_a_bound_on_evidence_recorded_unstreamed_refuses_as_unmeasured() -> None:
    old = [make_step(0, 1, same_answers(20)), make_step(1, 2, same_answers(40))]
    verdict = judge_figures(sweep_figures(old), Bounds(itl_p95_seconds=1.0)).verdict_for(2)
    assert verdict is not None and not verdict.inside_bounds
    assert verdict.broken[-1] == f"itl_p95_seconds: ITL not measured ({UNSTREAMED})"


def test_the_latency_factor_compares_with_the_better_one_slot_p95() -> None:
    base = QuantileSample.of([1.0 + i / 1000 for i in range(300)])
    slow = QuantileSample.of([2.0 + i / 1000 for i in range(300)])
    assert base is not None and slow is not None
    low, high = factor_interval(slow, base, 0.9)
    point = (slow.value() or 0.0) / (base.value() or 1.0)
    assert low is not None and high is not None and low < point < high
    assert low > 1.5, "clearly above a factor of 1.5"
    verdict = latency_findings(
        replace(latency_figures([answer("x")], None), latency=slow),
        base,
        Bounds(latency_factor=1.5),
    )
    assert verdict and verdict[0].startswith("latency_factor: p95 turn latency")
    broken = latency_findings(None, base, Bounds(latency_factor=1.5))
    assert broken and broken[0].startswith("latency_factor")


def test_figures_with_latency_survive_a_round_trip() -> None:
    figures = sweep_figures(steps(ttft_at_two=0.5))
    again = checked(as_json(figures), SweepFigures)
    assert again == figures
    assert again.baseline.best_one_slot_latency is not None


@pytest.mark.parametrize(
    "stored,problem",
    [
        ({"count": 3, "tail_from": 2, "tail": [2.0, 1.0]}, "expected sorted numbers"),
        ({"count": 3, "tail_from": 2, "tail": [1.0]}, "expected a tail of ranks 2…3"),
        ({"count": 3, "tail_from": 2, "tail": [1.0, "x"]}, "expected a number"),
        ({"count": 3, "tail_from": 2, "tail": [-1.0, 1.0]}, "expected a number >= 0.0"),
        ({"count": "3", "tail_from": 2, "tail": [1.0, 2.0]}, "expected a whole number"),
    ],
)
def test_a_damaged_stored_sample_is_refused_naming_the_field(
    stored: dict[str, object], problem: str
) -> None:
    figures = as_json(latency_figures([answer("x")], None))
    figures["latency"] = stored
    with pytest.raises(MalformedJson, match=problem) as caught:
        checked_at({"latency": figures}, "latency", LatencyFigures)
    assert str(caught.value).startswith("latency.latency")
