"""p95s resampled by turn: intervals that count turns, not requests, and latency_factor on the
same turns at N and at one slot."""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from vibey_gh.errors import MalformedJson
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked, checked_at
from vibey_gh.slots.judging.latencies.by_turn import (
    REPLICATES,
    Resampled,
    grouped_p95,
    paired_p95_ratio,
)
from vibey_gh.slots.judging.latencies.latency import latency_figures
from vibey_gh.slots.judging.latencies.latency_bounds import latency_findings
from vibey_gh.slots.judging.latencies.latency_figures import QuantileSample


def passes(turns: int, repeats: int, seed: int = 1, scale: float = 1.0) -> dict[str, list[float]]:
    """`turns` turns of very different lengths (0.2 s … 4 s), each sent `repeats` times with
    ±5% noise."""
    rng = random.Random(seed)
    lengths = [0.2 + 3.8 * i / (turns - 1) for i in range(turns)]
    return {
        f"t{i}": [scale * length * rng.uniform(0.95, 1.05) for _ in range(repeats)]
        for i, length in enumerate(lengths)
    }


def test_repeated_turns_widen_the_interval_counting_requests_would_give() -> None:
    by_turn = passes(turns=16, repeats=30)
    resampled = grouped_p95(by_turn)
    sample = QuantileSample.of([v for values in by_turn.values() for v in values])
    assert resampled is not None and sample is not None
    assert resampled.point == sample.value()
    low, high = resampled.interval(0.9)
    naive_low, naive_high = sample.interval(0.9)
    assert low is not None and high is not None and naive_low is not None and naive_high
    assert high - low > 2 * (naive_high - naive_low), "16 turns know less than 480 requests"
    assert len(resampled.replicates) == REPLICATES
    assert grouped_p95(by_turn) == resampled, "a fixed seed: the same evidence, the same interval"


def test_too_few_turns_or_values_leave_a_side_unbounded() -> None:
    few = grouped_p95(passes(turns=3, repeats=40))
    assert few is not None and few.interval(0.9) == (None, None)
    small = grouped_p95(passes(turns=8, repeats=2))  # 16 values: a p95 without an upper end
    assert small is not None and small.interval(0.9)[1] is None


def test_the_same_turns_slower_by_a_factor_are_paired_to_that_factor() -> None:
    base = passes(turns=16, repeats=12, seed=1)
    here = passes(turns=16, repeats=12, seed=2, scale=1.4)
    paired = paired_p95_ratio(here, base)
    assert paired is not None and paired.point == pytest.approx(1.4, rel=0.05)
    low, high = paired.interval(0.9)
    assert low is not None and high is not None and low < 1.4 < high < 1.5
    # judged: a factor of 1.5 is met on the same turns, 1.3 is broken
    figures = replace(latency_figures([], None), factor_by_turn=paired)
    assert latency_findings(figures, None, Bounds(latency_factor=1.5)) == []
    broken = latency_findings(figures, None, Bounds(latency_factor=1.3))
    assert broken and "one slot's on the same turns" in broken[0]


def test_turns_only_one_side_served_are_left_out_of_the_pairing() -> None:
    base = {"a": [1.0], "b": [2.0]}
    assert paired_p95_ratio({"c": [1.0]}, base) is None
    only_shared = paired_p95_ratio({"a": [1.5], "z": [100.0]}, base)
    assert only_shared is not None and only_shared.point == pytest.approx(1.5)


def test_a_resampling_survives_a_round_trip_and_a_damaged_one_is_refused() -> None:
    resampled = grouped_p95(passes(turns=10, repeats=10))
    assert resampled is not None
    assert checked(as_json(resampled), Resampled) == resampled
    damaged = {**as_json(resampled), "replicates": [2.0, 1.0]}
    with pytest.raises(MalformedJson, match="expected sorted numbers"):
        checked_at({"r": damaged}, "r", Resampled)
    text = {**as_json(resampled), "replicates": [1.0, "x"]}
    with pytest.raises(MalformedJson, match="expected a number"):
        checked_at({"r": text}, "r", Resampled)
    wrong = {**as_json(resampled), "turns": 0}
    with pytest.raises(MalformedJson, match="turn"):
        checked_at({"r": wrong}, "r", Resampled)
