"""Latency bounds at the gate: a bound added after calibrating is judged on the evidence as
measured, and no allowed N has a p95 above an absolute limit, whatever its interval."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from tests.slots.gate.test_allowed import config, deps_for, record
from tests.support.latency import latency_sweep, streamed, timed
from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.token_gaps import as_gaps, bucket_of
from vibey_gh.slots.gate.allowed import decide_allowed
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.judge import judge_figures
from vibey_gh.slots.judging.latencies.latency import latency_figures
from vibey_gh.slots.judging.latencies.latency_bounds import (
    UNDECIDED_WHEN_ENDED,
    latency_findings,
)
from vibey_gh.slots.judging.latencies.latency_figures import QuantileSample


def test_a_ttft_bound_added_after_calibrating_refuses_the_step_it_cannot_decide(
    tmp_path: Path,
) -> None:
    # measured without a bound: N=3's p95 TTFT ends up near where the operator puts one
    steps = latency_sweep(ttft_at_two=0.25, ttft_at_three=0.35)
    record(tmp_path, steps)
    assert decide_allowed(config("measured"), deps=deps_for(tmp_path)).allowed == 3
    three = sweep_figures(steps).steps[3].latency
    assert three is not None and three.ttft is not None
    point = three.ttft.value()
    low, high = three.ttft.interval(Bounds().confidence)
    assert point is not None and low is not None and high is not None and low < point < high
    # the limit just above N=3's p95, inside its interval: undecided, never allowed
    undecided = Bounds(ttft_p95_seconds=(point + high) / 2)
    answer = decide_allowed(config("measured", undecided), deps=deps_for(tmp_path))
    assert answer.allowed == 2, answer.reason
    verdict = judge_figures(sweep_figures(steps), undecided).verdict_for(3)
    assert verdict is not None and verdict.broken[0].endswith(UNDECIDED_WHEN_ENDED)
    # the limit just under N=3's p95, its interval reaching below: the p95 is above it
    broken = Bounds(ttft_p95_seconds=(low + point) / 2)
    assert decide_allowed(config("measured", broken), deps=deps_for(tmp_path)).allowed == 2


values = st.lists(st.floats(0.0, 10.0), min_size=1, max_size=300)


@settings(max_examples=200, deadline=None)
@given(
    sample=values,
    limit=st.floats(0.01, 10.0),
    confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
    to_cap=st.booleans(),
    look=st.sampled_from([(0, 0), (1, 5), (4, 5), (5, 5)]),
)
def test_no_p95_above_an_absolute_limit_passes_whatever_its_interval(
    sample: list[float], limit: float, confidence: float, to_cap: bool, look: tuple[int, int]
) -> None:
    stored = QuantileSample.of(sample)
    assert stored is not None
    step = replace(latency_figures([], None), ttft=stored, measured_to_cap=to_cap)
    bounds = Bounds(ttft_p95_seconds=limit, confidence=confidence)
    if not latency_findings(step, None, bounds, look):
        point = stored.value()
        high = stored.interval(confidence)[1]
        assert point is not None and point <= limit
        assert high is not None and high <= limit


@settings(max_examples=60, deadline=None)
@given(
    turns=st.lists(
        st.lists(st.floats(0.001, 0.5), min_size=1, max_size=20), min_size=1, max_size=12
    ),
    repeats=st.integers(1, 4),
    limit=st.floats(0.001, 0.5),
    look=st.sampled_from([(0, 0), (1, 5), (5, 5)]),
)
def test_no_itl_p95_above_its_limit_passes_whatever_its_intervals(
    turns: list[list[float]], repeats: int, limit: float, look: tuple[int, int]
) -> None:
    """Gaps between tokens of turns sent `repeats` times each (resampled by turn as well)."""
    results, ids = [], []
    for i, gaps in enumerate(turns * repeats):
        turn = answer("x", started=float(i), ended=i + 1.0, output_tokens=len(gaps) + 1)
        counted = as_gaps(Counter(bucket_of(g) for g in gaps))
        results.append(replace(streamed(turn, 0.1, 0.01), token_gaps=counted))
        ids.append(f"t{i % len(turns)}")
    step = latency_figures(results, None, turn_ids=ids)
    assert step.itl is not None and step.itl_by_turn is not None
    if not latency_findings(step, None, Bounds(itl_p95_seconds=limit), look):
        point = step.itl.value()
        assert point is not None and point <= limit
        assert step.itl_by_turn.point <= limit
    else:
        event("refused")


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ttfts=st.lists(st.floats(0.05, 1.0), min_size=2, max_size=2),
    spreads=st.lists(st.floats(0.0, 0.01), min_size=2, max_size=2),
    turns=st.integers(20, 80),
    limit=st.floats(0.05, 2.0),
    gap=st.floats(0.01, 0.05),
    factor=st.none() | st.floats(1.0, 4.0),
)
def test_no_allowed_n_has_a_p95_above_an_absolute_limit(
    tmp_path_factory, ttfts, spreads, turns, limit, gap, factor
) -> None:
    one = [
        timed(make_step(i, 1, same_answers(turns), steady=True), 0.1, 0.02, 0.001) for i in (0, 1)
    ]
    more = [
        timed(make_step(n, n, same_answers(turns * n), steady=True), ttft, 0.01 * n, spread)
        for n, ttft, spread in zip((2, 3), ttfts, spreads, strict=True)
    ]
    steps = [*one, *more]
    bounds = Bounds(ttft_p95_seconds=limit, itl_p95_seconds=gap, latency_factor=factor)
    root = tmp_path_factory.mktemp("latency")
    record(root, steps)
    allowed = decide_allowed(config("measured", bounds), deps=deps_for(root)).allowed
    event(f"allowed {allowed}")
    if allowed > 1:
        latency = sweep_figures(steps).steps[allowed].latency
        assert latency is not None and latency.ttft is not None and latency.itl is not None
        assert (latency.ttft.value() or 0.0) <= limit
        assert (latency.itl.value() or 0.0) <= gap
