"""The steady-state stopping rule: a step ends only once its gain and every configured latency
bound are decided, or at its cap."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from types import SimpleNamespace

from msgspec.structs import replace

from tests.support.clocks import ManualClock
from tests.support.latency import latency_sweep
from tests.support.slot_builders import answer
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.judging.baseline import baseline_of, sweep_figures, turns_latency
from vibey_gh.slots.judging.records import BlockRecord, StepRecord, TurnRecord
from vibey_gh.slots.judging.statistics.sequential import look_confidence
from vibey_gh.slots.judging.statistics.stats import Estimate
from vibey_gh.slots.measurement.calibrate import bars_for
from vibey_gh.slots.measurement.stepping.stopping import (
    ENDED_DECIDED,
    ENDED_LATENCY_CAP,
    REFERENCE_REPEATS,
    SteadyStateRule,
    gain_undecided,
    reference_repeats,
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
    even_looks_seconds: float | None = None
    interleave_seconds: float | None = None
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
    # a cap a latency bound lengthened keeps the ordinary cap's looks, then doubles: the step
    # passes where the ordinary cap ended it, at an early look's confidence
    longer = rule(bounds, max_step_seconds=400.0, min_step_seconds=10.0, even_looks_seconds=50.0)
    assert longer.planned == [10.0, 20.0, 30.0, 40.0, 50.0, 100.0, 200.0, 400.0]
    assert longer(list(TWO.turns)) is True and not longer.reached_cap
    assert longer.look == 5 and longer.looks == 8  # the ordinary cap, now an early look


def _closed_loop(
    index: int, slots: int, seconds: float, rng: random.Random, ids: int = 10, noise: float = 0.1
) -> StepRecord:
    """`slots` workers back to back for 100 s, turns t0..t<ids − 1> of `seconds` × noise each."""
    turns: list[TurnRecord] = []
    for worker in range(slots):
        clock, i = 0.0, worker
        while clock < 100.0:
            length = seconds * math.exp(noise * rng.gauss(0.0, 1.0))
            result = answer("plain", started=clock, ended=clock + length)
            turns.append(TurnRecord(f"t{i % ids}", f"s{i}", worker, result))
            clock, i = clock + length, i + 1
    turns.sort(key=lambda t: t.result.ended)
    measured = {"why_ended": "test", "reached_cap": False}
    return replace(TWO, index=index, slots=slots, turns=tuple(turns), measurement=measured)


def _rule_for(steps: list[StepRecord], slots: int, next_gain: float | None) -> SteadyStateRule:
    bounds = Bounds(min_gain=0.10)
    compare_with, pair_with = bars_for(steps, slots, bounds)
    base = baseline_of(steps)
    ctx = Context(bounds, max_step_seconds=300.0, min_step_seconds=60.0)
    return SteadyStateRule(
        ctx,  # type: ignore[arg-type]
        slots,
        compare_with,
        base,
        base.pairing,
        pair_with,
        next_gain,
    )


def test_a_step_that_could_not_climb_by_its_cap_stops_and_one_that_climbs_measures_on() -> None:
    """Futility: N=3 serving what N=2 served cannot show a 10% gain over it however long it
    runs, so it stops; N=3 serving half as much again as N=2 is not stopped for it."""
    rng = random.Random(3)
    steps = [_closed_loop(i, s, 1.0, rng) for i, s in enumerate((1, 1))]
    steps.append(_closed_loop(2, 2, 1.0, rng))
    flat = _closed_loop(3, 3, 1.5, rng)
    climbing = _closed_loop(3, 3, 1.0, rng)
    assert _rule_for(steps, 3, None).out_of_reach(list(flat.turns), 0.0, 100.0)
    assert not _rule_for(steps, 3, None).out_of_reach(list(climbing.turns), 0.0, 100.0)
    # one slot against one slot has no best step above it to climb over: never futile
    assert not _rule_for(steps[:2], 2, None).out_of_reach(list(steps[2].turns), 0.0, 100.0)


def test_the_reference_costs_noise_that_cancels_between_two_steps_never_makes_one_futile() -> None:
    """N=3 gaining a true +15% over N=2, on a corpus whose turns were each served about once
    per one-slot run (so their reference costs are noisy): the costs' noise is the same for
    both steps and cancels in their comparison, so it is no noise the cap cannot shrink.
    Counted as such (as it was), it stopped 5 of 40 such steps for futility."""
    for seed in range(16):
        rng = random.Random(seed)
        steps = [_closed_loop(i, s, 1.0, rng, ids=100, noise=0.3) for i, s in enumerate((1, 1, 2))]
        # three workers each as slow as 3 / (2 × 1.15) one-slot turns: +15% over N=2
        climbing = _closed_loop(3, 3, 3.0 / (2.0 * 1.15), rng, ids=100, noise=0.3)
        assert not _rule_for(steps, 3, None).out_of_reach(list(climbing.turns), 0.0, 100.0)


def test_a_bar_is_held_only_as_precisely_as_the_next_step_needs() -> None:
    steps = [_closed_loop(i, s, 1.0, random.Random(i)) for i, s in enumerate((1, 1, 2))]
    assert _rule_for(steps, 2, None).bar_precision(0.10) == 0.05
    assert _rule_for(steps, 2, 1.1).bar_precision(0.10) == 0.05  # the next gain is the bar
    loose = _rule_for(steps, 2, 1.3).bar_precision(0.10)
    assert math.isclose(loose, math.expm1(math.log(1.3 / 1.1) / 2.0))
    assert 0.05 < loose < _rule_for(steps, 2, 2.0).bar_precision(0.10) == 0.10  # at most ±10%
    # a next step expected to lose is as far from the bar as one expected to gain
    assert _rule_for(steps, 2, 0.8).bar_precision(0.10) > 0.05


def test_one_slot_runs_hold_each_turn_often_enough_to_be_the_latency_reference() -> None:
    """With latency_factor set, the one-slot runs before the steps are measured on until
    they hold each turn `reference_repeats` times between them; without it, or for a closing
    run after a complete reference, one slot stops as before."""
    first = _closed_loop(0, 1, 1.0, random.Random(5))  # t0..t9 of about 1 s, back to back
    window = list(first.turns)

    def short(bounds: Bounds, earlier: list[StepRecord], seconds: float) -> bool:
        base = baseline_of(earlier) if earlier else None
        ctx = Context(bounds, max_step_seconds=300.0, min_step_seconds=60.0)
        one_slot = SteadyStateRule(ctx, 1, (), base)  # type: ignore[arg-type]
        return one_slot.reference_short(window, 0.0, seconds)

    factor = Bounds(latency_factor=1.5)
    assert short(factor, [], 12.0), "about one request a turn: measured on"
    assert not short(factor, [], 60.0), "about six a turn: at least half the reference"
    assert not short(Bounds(), [], 12.0), "no latency_factor: no reference to hold"
    # after a first run of ten a turn the reference is complete: a short run stops
    assert not short(factor, [first], 12.0)
    # an earlier run of one pass leaves it short until this one holds half of it
    one_pass = replace(first, turns=tuple(t for t in first.turns if t.result.started < 10.0))
    assert short(factor, [one_pass], 22.0) and not short(factor, [one_pass], 60.0)
    # a latency bound's long cap asks a longer reference, at most four times as long
    assert reference_repeats(60.0, 300.0) == REFERENCE_REPEATS
    assert reference_repeats(4.0, 40.0) == 2 * REFERENCE_REPEATS
    assert reference_repeats(4.0, 160.0) == reference_repeats(4.0, 80.0) == 4 * REFERENCE_REPEATS
    ctx = Context(factor, max_step_seconds=1200.0, min_step_seconds=60.0)
    long_cap = SteadyStateRule(ctx, 1, (), None)  # type: ignore[arg-type]
    assert long_cap.reference_short(window, 0.0, 60.0), "six a turn: short of half of 32"


def test_a_step_whose_gain_decided_first_measures_on_while_its_latency_factor_is_open() -> None:
    """N=2 gains about 40% over one slot (decided at its first look) while each turn takes
    1.4× as long: a latency_factor inside its interval keeps it measuring, one above it not."""
    rng = random.Random(11)
    steps = [_closed_loop(i, 1, 1.0, rng) for i in range(2)]
    two = _closed_loop(2, 2, 1.4, rng)
    base = baseline_of(steps)
    figures = turns_latency(list(two.turns), "segments", (0.0, 100.0), base=base.paired)
    per_turn = figures.factor_per_turn
    assert per_turn is not None
    _, high = per_turn.interval(look_confidence(0.90, 1, 5))  # 100 s: the first of five looks
    assert high is not None and per_turn.point < high

    def measures_on(factor: float) -> SteadyStateRule:
        bounds = Bounds(min_gain=0.10, latency_factor=factor)
        compare_with, pair_with = bars_for(steps, 2, bounds)
        ctx = Context(bounds, max_step_seconds=300.0, min_step_seconds=60.0)
        return SteadyStateRule(ctx, 2, compare_with, base, base.pairing, pair_with)  # type: ignore[arg-type]

    open_ = measures_on((per_turn.point + high) / 2.0)
    assert open_(list(two.turns)) is True, "the gain is decided, latency_factor is not"
    decided = measures_on(high * 1.2)
    assert decided(list(two.turns)) is False and decided.why == ENDED_DECIDED


def test_a_marginal_step_read_short_of_min_gain_stops_one_read_above_it_goes_on() -> None:
    assert not gain_undecided((1.06, 1.13), 0.10), "inside the zone, read below 10%: stop"
    assert gain_undecided((1.08, 1.14), 0.10), "inside the zone, read above 10%: measure on"
    assert gain_undecided((1.02, 1.20), 0.10), "reaching past the zone: measure on"
    assert not gain_undecided((1.11, 1.14), 0.10), "clears min_gain: decided"
    assert not gain_undecided((0.95, 1.09), 0.10), "short of min_gain: decided"
    assert not gain_undecided(None, 0.10)


def test_a_one_slot_run_that_is_no_bar_ends_once_it_served_the_corpus() -> None:
    """In a sweep whose steps above one slot carry their own one-slot blocks, a one-slot run
    is no step's bar: it ends at its first ask (the step asks once every corpus turn was
    served), with clusters enough; a bar is looked at first where its looks are evenly
    spaced (here at 25 s of a 50 s cap, past the 20 s minimum). With latency_factor set it is
    the reference its repeats hold, looked at first at the minimum."""
    run = _closed_loop(0, 1, 1.0, random.Random(3))  # t0..t9 of about 1 s, back to back

    def ends_at(no_bar: bool, seconds: float, bounds: Bounds | None = None) -> bool:
        ctx = Context(bounds or Bounds(), max_step_seconds=50.0, min_step_seconds=20.0)
        ctx.clock = ManualClock(t=seconds)
        one_slot = SteadyStateRule(ctx, 1, (), None, no_bar=no_bar)  # type: ignore[arg-type]
        window = [t for t in run.turns if t.result.ended <= seconds]
        return not one_slot(window)

    assert ends_at(True, 11.0) and not ends_at(False, 11.0) and not ends_at(False, 21.0)
    assert not ends_at(True, 3.0), "too few turns for clusters yet"
    assert ends_at(False, 41.0)
    reference = Bounds(latency_factor=1.5)
    assert not ends_at(True, 11.0, reference)
    # a step above one slot keeps its planned looks, no_bar or not
    ctx = Context(Bounds(), max_step_seconds=50.0, min_step_seconds=20.0)
    two = SteadyStateRule(ctx, 2, (), None, no_bar=True)  # type: ignore[arg-type]
    assert two.planned[0] == 25.0


def test_an_interleaved_step_is_first_looked_at_at_half_the_minimum() -> None:
    """Its pairs of blocks, seconds apart, cancel the wander a minute's window is for: it may
    stop at 30 s of a 60 s minimum, where a step that does not interleave measures on."""
    run = _closed_loop(0, 2, 1.0, random.Random(3))
    quad = (1, 2, 2, 1)
    blocks = tuple(BlockRecord(1.0 * i, 1.0 * (i + 1), quad[i % 4]) for i in range(100))

    def ends_at(interleaved: bool, seconds: float, slots: int = 2) -> bool:
        ctx = Context(Bounds(), max_step_seconds=300.0, min_step_seconds=60.0)
        ctx.interleave_seconds = 1.0  # eight pairs of blocks close in 16 s
        ctx.clock = ManualClock(t=seconds)
        closed = tuple(b for b in blocks if b.stop <= seconds)
        step = SteadyStateRule(
            ctx,  # type: ignore[arg-type]
            slots,
            (),
            None,
            blocks=(lambda: closed) if interleaved else None,
        )
        if interleaved and slots > 1:
            assert step.planned == [30.0, 60.0, 120.0, 180.0, 240.0, 300.0]
        else:
            assert step.planned[0] == 60.0
        return not step([t for t in run.turns if t.result.ended <= seconds])

    assert ends_at(True, 31.0) and not ends_at(False, 31.0)
    assert not ends_at(True, 29.0), "before its first look"
    assert ends_at(False, 61.0)
    assert not ends_at(True, 31.0, slots=1), "one slot has no blocks of its own to pair"
    # blocks too long for eight pairs by then: no look that could not decide
    ctx = Context(Bounds(), max_step_seconds=300.0, min_step_seconds=60.0)
    ctx.interleave_seconds = 2.0
    long_blocks = SteadyStateRule(ctx, 2, (), None, blocks=lambda: blocks)  # type: ignore[arg-type]
    assert long_blocks.planned[0] == 60.0
