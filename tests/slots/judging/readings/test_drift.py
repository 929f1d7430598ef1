"""A soak's drift decided on intervals: holds, drifted, inconclusive, broke a bound."""

from __future__ import annotations

import random

from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.readings import Reading, ReadingSample
from vibey_gh.slots.judging.readings.drift import (
    BROKE,
    DRIFTED,
    HOLDS,
    INCONCLUSIVE,
    SoakSpan,
    judge_soak,
    trend,
    windows_of,
)

BOUNDS = Bounds(min_gain=0.10, confidence=0.90)
GB = 1e9


def _span(
    seconds: float,
    gap: float,
    slower_after: float | None = None,
    seed: int = 0,
    poisson: bool = False,
) -> SoakSpan:
    """Units ending every `gap` seconds (± 10 %, or as a Poisson process), every 1.6 × gap
    after `slower_after`."""
    rng = random.Random(seed)
    ends, t = [], 0.0
    while t < seconds:
        slow = slower_after is not None and t >= slower_after
        spread = rng.expovariate(1.0) if poisson else rng.uniform(0.9, 1.1)
        t += gap * (1.6 if slow else 1.0) * spread
        ends.append(t)
    return SoakSpan(0.0, seconds, tuple(e for e in ends if e <= seconds))


def _ticks(
    seconds: float, every: float = 10.0, **values: float | tuple[float, float]
) -> list[tuple[float, ReadingSample]]:
    """Ticks whose readings are constant, or grow linearly from (start, per second)."""
    out = []
    t = 0.0
    while t <= seconds:
        readings = {}
        for key, value in values.items():
            name = key.replace("__", ".")
            number = value[0] + value[1] * t if isinstance(value, tuple) else value
            readings[name] = Reading(number)
        out.append((t, ReadingSample(t, readings)))
        t += every
    return out


def test_a_steady_runner_holds() -> None:
    judged = judge_soak([_span(600, 0.25)], _ticks(600), BOUNDS, 50)
    assert judged.verdict == HOLDS and judged.holds
    assert len(judged.windows) == 12
    assert judged.last_over_first is not None
    point, low, high = judged.last_over_first
    assert low >= 0.9 and low <= point <= high
    assert judged.trend_per_hour is not None and judged.trend_per_hour.low is not None
    assert judged.trend_per_hour.low < 0 < (judged.trend_per_hour.high or 0)


def test_a_runner_that_slows_down_drifted() -> None:
    judged = judge_soak([_span(600, 0.25, slower_after=200)], _ticks(600), BOUNDS, 50)
    assert judged.verdict == DRIFTED
    assert judged.last_over_first is not None and judged.last_over_first[2] < 0.9
    assert any(r.startswith("throughput fell") for r in judged.reasons)
    assert judged.trend_per_hour is not None and (judged.trend_per_hour.high or 0) < 0


def test_too_short_or_too_noisy_is_inconclusive() -> None:
    short = judge_soak([_span(60, 0.25)], _ticks(60), BOUNDS, 50)
    assert short.verdict == INCONCLUSIVE
    assert "fewer than two whole windows" in short.reasons[0]
    sparse = judge_soak([_span(600, 5.0)], _ticks(600), BOUNDS, 50)
    assert sparse.verdict == INCONCLUSIVE
    assert "too few for an interval" in sparse.reasons[0]
    noisy = judge_soak([_span(600, 1.2, poisson=True)], _ticks(600), BOUNDS, 50)
    assert noisy.verdict == INCONCLUSIVE
    assert "straddles" in noisy.reasons[0]


def test_a_throttle_that_costs_nothing_is_named_and_holds() -> None:
    ticks = _ticks(600, gpu0__throttled=1.0)
    for _at, sample in ticks:
        sample.notes["gpu0.throttled"] = "sw_power_cap"  # type: ignore[index]
    judged = judge_soak([_span(600, 0.25)], ticks, BOUNDS, 50)
    assert judged.verdict == HOLDS
    assert judged.throttles == ("gpu0: sw_power_cap",)
    assert judged.throttle_cost == "none"
    assert any("without costing throughput" in r for r in judged.reasons)


def test_a_throttle_with_a_fall_is_named_as_its_likely_cause() -> None:
    ticks = [(at, s) for at, s in _ticks(600, cpu__throttled=1.0)]
    judged = judge_soak([_span(600, 0.25, slower_after=200)], ticks, BOUNDS, 50)
    assert judged.verdict == DRIFTED and judged.throttle_cost == "likely"


def test_memory_that_would_use_up_what_is_free_within_a_day_drifted() -> None:
    ticks = _ticks(600, runner__rss_bytes=(1 * GB, 1e6), host__free_share=0.2,
                   host__total_bytes=10 * GB)  # fmt: skip
    judged = judge_soak([_span(600, 0.25)], ticks, BOUNDS, 50)
    assert judged.verdict == DRIFTED
    assert judged.rss_per_hour is not None and abs(judged.rss_per_hour.slope - 3.6e9) < 1e3
    assert any("runner memory grows" in r for r in judged.reasons)


def test_memory_that_settles_holds() -> None:
    ticks = _ticks(600, runner__rss_bytes=1 * GB, host__free_share=0.2, host__total_bytes=10 * GB)
    assert judge_soak([_span(600, 0.25)], ticks, BOUNDS, 50).verdict == HOLDS


def test_a_wired_ceiling_broken_at_any_tick_breaks_the_soak() -> None:
    ticks = _ticks(600, host__wired_bytes=5 * GB, host__total_bytes=10 * GB)
    ticks[30] = (300.0, ReadingSample(300.0, {"host.wired_bytes": Reading(9 * GB),
                                              "host.total_bytes": Reading(10 * GB)}))  # fmt: skip
    judged = judge_soak([_span(600, 0.25)], ticks, BOUNDS, 50)
    assert judged.verdict == BROKE
    assert judged.breaks[0].bound == "wired_ceiling" and judged.breaks[0].at_s == 300.0


def test_swapping_out_fast_breaks_the_soak() -> None:
    ticks = _ticks(600, swap__out_bytes=(0.0, 5e6))  # 300 MB/min
    judged = judge_soak([_span(600, 0.25)], ticks, BOUNDS, 50)
    assert judged.verdict == BROKE
    assert judged.breaks[0].bound == "swap_floor_mb_per_min"


def test_a_resumed_soak_windows_each_span_and_counts_on() -> None:
    first, second = _span(120, 0.25), _span(130, 0.25, seed=1)
    moved = SoakSpan(1000.0, 1130.0, tuple(e + 1000.0 for e in second.ends))
    windows = windows_of([first, moved], 50)
    assert [w.at_s for w in windows] == [0.0, 50.0, 120.0, 170.0]


def test_trend_of_a_line_is_its_slope_with_a_narrow_interval() -> None:
    fitted = trend([(x, 2.0 * x + 1.0 + (0.01 if x % 2 else -0.01)) for x in range(10)], 0.9)
    assert fitted is not None and fitted.low is not None and fitted.high is not None
    assert fitted.low < 2.0 < fitted.high and fitted.high - fitted.low < 0.05
    assert trend([(1.0, 1.0)], 0.9) is None


def test_production_busy_during_the_soak_is_said() -> None:
    ticks = _ticks(600, production__busy=0.0)
    for index in range(0, len(ticks), 4):  # 16 of the 61 ticks
        at, sample = ticks[index]
        ticks[index] = (at, ReadingSample(at, {"production.busy": Reading(1.0)}))
    judged = judge_soak([_span(600, 0.25)], ticks, BOUNDS, 50)
    assert judged.verdict == HOLDS
    assert any(r.startswith("production held a model in 26% of the ticks") for r in judged.reasons)


def _warming(seconds: float, warm_s: float, rise: float) -> list[tuple[float, ReadingSample]]:
    """A runner whose memory rises by `rise` bytes over its first `warm_s` seconds (its
    caches filling), then stays flat (± 0.1 %)."""
    rng = random.Random(1)
    out = []
    for at, sample in _ticks(seconds, host__free_share=0.5, host__total_bytes=32 * GB):
        rss = 6 * GB + rise * min(at, warm_s) / warm_s
        readings = {**sample.readings, "runner.rss_bytes": Reading(rss * rng.uniform(0.999, 1.001))}
        out.append((at, ReadingSample(at, readings)))
    return out


def test_a_warm_up_rise_then_flat_holds() -> None:
    """A 10-minute soak whose runner's memory grew 1.5 GB in the first minute (its first pass
    over the corpus) and then stayed flat: the warm-up is not extrapolated to a day."""
    ticks = _warming(600, 60, 1.5 * GB)
    for warm_up in (90.0, None):  # the first pass's end known, or found by the levelling
        judged = judge_soak([_span(600, 0.25)], ticks, BOUNDS, 50, warm_up_s=warm_up)
        assert judged.verdict == HOLDS, (warm_up, judged.reasons)
        assert not any("memory grows" in r for r in judged.reasons)
    fitted_from_start = judge_soak([_span(600, 0.25)], ticks, BOUNDS, 50, warm_up_s=0.0)
    assert fitted_from_start.verdict == DRIFTED, "the same readings, the warm-up included"


def test_a_soak_too_short_after_its_warm_up_is_undecided_never_drifted() -> None:
    """The 2-minute soak of the issue: memory rising for a minute, then a minute flat."""
    ticks = _warming(120, 60, 1.5 * GB)
    judged = judge_soak([_span(120, 0.25)], ticks, BOUNDS, 30, warm_up_s=80.0)
    assert judged.verdict != DRIFTED
    said = [u for u in judged.unjudged if u.startswith("runner memory: undecided")]
    assert said == [
        "runner memory: undecided (it is fitted after the warm-up, 1m); soak at least 6m"
    ]


def test_a_memory_leak_after_the_warm_up_still_drifts() -> None:
    ticks = _ticks(1200, runner__rss_bytes=(1 * GB, 1e6), host__free_share=0.2,
                   host__total_bytes=10 * GB)  # fmt: skip
    judged = judge_soak([_span(1200, 0.25)], ticks, BOUNDS, 50, warm_up_s=120.0)
    assert judged.verdict == DRIFTED
    assert any("after its warm-up" in r for r in judged.reasons)
