"""The steady-state stopping rule: a step ends only once its gain and every configured latency
bound are decided, or at its cap."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from tests.support.clocks import ManualClock
from tests.support.latency import latency_sweep
from vibey_gh.slots.judging.baseline import baseline_of, sweep_figures
from vibey_gh.slots.judging.bounds import Bounds
from vibey_gh.slots.judging.statistics.stats import Estimate
from vibey_gh.slots.measurement.stepping.stopping import (
    ENDED_DECIDED,
    ENDED_LATENCY_CAP,
    SteadyStateRule,
)

STEPS = latency_sweep(ttft_at_two=0.3, ttft_at_three=0.4)
TWO = STEPS[2]  # 200 turns over 100 s at two slots: a clear gain over one slot's 100


@dataclass
class Context:
    """What the rule reads of a step's context, with the clock at the step's end."""

    bounds: Bounds
    # planned looks every 30 s up to 150 s: the step's 100 s have passed three of them
    max_step_seconds: float = 150.0
    min_step_seconds: float = 1.0
    clock: ManualClock = field(default_factory=lambda: ManualClock(t=100.0))
    corpus: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(shape="segments"))

    @property
    def bounds_now(self):  # type: ignore[no-untyped-def]
        return lambda: self.bounds


def rule(bounds: Bounds, **ctx: float) -> SteadyStateRule:
    bar = Estimate(3600.0, se=10.0, batches=10)  # one slot: 100 turns in 100 s, steady
    base = baseline_of(STEPS)
    return SteadyStateRule(Context(bounds, **ctx), 2, (bar,), base)  # type: ignore[arg-type]


def straddled_limit() -> float:
    latency = sweep_figures(STEPS).steps[2].latency
    assert latency is not None and latency.ttft is not None
    low, high = latency.ttft.interval(0.9)
    assert low is not None and high is not None and low < high
    return (low + high) / 2


def test_a_step_decided_on_its_gain_ends_when_no_latency_bound_is_open() -> None:
    free = rule(Bounds(min_gain=0.10))
    assert free(list(TWO.turns)) is False and free.why == ENDED_DECIDED


def test_a_step_decided_on_its_gain_measures_on_while_a_latency_bound_is_undecided() -> None:
    bounds = Bounds(min_gain=0.10, ttft_p95_seconds=straddled_limit())
    open_ = rule(bounds)
    assert open_(list(TWO.turns)) is True, "its gain is decided, its TTFT is not"
    # at the cap it ends, saying the latency was what stayed undecided
    capped = rule(bounds, max_step_seconds=50.0)
    assert capped(list(TWO.turns)) is False
    assert capped.reached_cap and capped.why == ENDED_LATENCY_CAP
