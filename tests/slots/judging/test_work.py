"""A step's work read from its turns: where turns share the runner, how the time is split
between the turns served together is not noise; what the step's blocks of wall time did, the
reference costs' spread and how far one slot's runs strayed from each other are."""

from __future__ import annotations

import math

import pytest
from msgspec.structs import replace

from tests.slots.judging.test_steady_state import closed_loop
from tests.support.slot_builders import answer, runs_loop
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.gains import interval_method, pairing_sentence
from vibey_gh.slots.judging.records import StepRecord, TurnRecord
from vibey_gh.slots.judging.statistics.paired import (
    Between,
    ClusterWork,
    Ratio,
    StepWork,
    across_runs,
    between_runs,
    capacity_ratio,
)
from vibey_gh.slots.judging.statistics.stats import t_quantile
from vibey_gh.slots.judging.work import (
    GAINS_KEY,
    THINK_LAW,
    by_think_law,
    pairing_of,
    reference_costs,
    step_work,
)

# one-slot costs of ten turns, cheap and dear alternately (the demo's spread: 1 s to 9 s)
COSTS = [1.0, 9.0, 1.5, 8.0, 2.0, 7.0, 1.0, 9.0, 1.5, 8.0]


def _one_slot(index: int, wobble: float) -> list[TurnRecord]:
    """Every turn once per pass, four passes, each `wobble` × its cost on odd passes."""
    turns, clock = [], 0.0
    for n in range(4):
        for k, cost in enumerate(COSTS):
            seconds = cost * (wobble if n % 2 else 1.0)
            turns.append(
                TurnRecord(f"t{k}", f"s{k}", 0, answer("a", started=clock, ended=clock + seconds))
            )
            clock += seconds
    return turns


def _served_together(gain: float) -> list[TurnRecord]:
    """Two workers; each cheap turn is served beside a dear one and both end together (a CPU
    runner finishing a long prefill before the short turn beside it): the cheap one reads
    slow, the dear one fast, and the pair does `gain` × its one-slot work in its time."""
    turns, clock = [], 0.0
    for _ in range(4):
        for k in range(0, len(COSTS), 2):
            cheap, dear = COSTS[k], COSTS[k + 1]
            seconds = (cheap + dear) / gain
            for worker, turn in ((0, k), (1, k + 1)):
                result = answer("a", started=clock, ended=clock + seconds)
                turns.append(TurnRecord(f"t{turn}", f"s{turn}", worker, result))
            clock += seconds
    return turns


def _step(slots: int, turns: list[TurnRecord], index: int) -> StepRecord:
    return replace(closed_loop(slots, [1.0], index=index), turns=tuple(turns))


def test_turns_served_together_are_not_read_as_noise() -> None:
    one = [_step(1, _one_slot(i, 1.0), i) for i in range(2)]
    pairing = pairing_of(one)
    assert pairing is not None
    two = pairing.work_of(_step(2, _served_together(1.3), 2))
    assert two is not None and two.blocks
    ratio = pairing.gain(two)
    assert ratio is not None and ratio.value == pytest.approx(1.3, rel=0.02)
    # read by turn, the cheap turns took 5× their cost and the dear ones 0.6×: ±30% or more
    by_turn = capacity_ratio([StepWork(2, two.clusters)], pairing.pool)
    assert by_turn is not None and by_turn.log_se is not None and by_turn.log_se > 0.15
    # the blocks did the same work in every stretch of time: no noise but the costs' (none)
    assert ratio.log_se is not None and ratio.log_se < 0.02


def test_the_reference_costs_spread_is_in_the_interval_by_each_turns_share() -> None:
    one = [_step(1, _one_slot(0, 1.0), 0), _step(1, _one_slot(1, 1.2), 1)]
    costs = reference_costs(one)
    assert costs is not None and costs.noise is not None and costs.noise > 0.05
    pairing = pairing_of(one)
    assert pairing is not None
    two = pairing.work_of(_step(2, _served_together(1.3), 2))
    assert two is not None
    ratio = pairing.gain(two)
    assert ratio is not None and ratio.log_se is not None
    total = sum(work for work, _ in two.turns.values())
    expected = math.sqrt(sum((w / total) ** 2 * v for w, v in two.turns.values()))
    blocks_only = capacity_ratio([StepWork(2, two.clusters, two.blocks)], pairing.pool)
    assert blocks_only is not None and blocks_only.log_se is not None
    assert ratio.log_se == pytest.approx(math.hypot(blocks_only.log_se, expected), rel=1e-6)


def test_one_slot_runs_that_stray_add_their_spread_with_its_few_degrees_of_freedom() -> None:
    steady = [StepWork(1, {"t": ClusterWork(10.0, 10.0)}, (ClusterWork(5.0, 5.0),) * 2)] * 3
    assert between_runs(steady, 2) == Between(0.0, 2, 2)
    strayed = [
        StepWork(1, {"t": ClusterWork(10.0 * f, 10.0)}, (ClusterWork(5.0 * f, 5.0),) * 2)
        for f in (1.0, 1.1, 0.9)
    ]
    between = between_runs(strayed, 2)
    logs = [0.0, math.log(1.1), math.log(0.9)]
    mean = sum(logs) / 3
    assert between.variance == pytest.approx(sum((v - mean) ** 2 for v in logs) / 2)
    ratio = across_runs(Ratio(1.3, 0.05, 20), between)
    # two degrees of freedom between runs, read with the ratio's nineteen: paid in the variance
    paid = (t_quantile(0.95, 2) / t_quantile(0.95, 19)) ** 2
    assert ratio.log_se == pytest.approx(math.sqrt(0.05**2 + between.variance * 1.5 * paid))
    assert ratio.clusters == 20 and paid > 2.5
    assert across_runs(Ratio(1.3, 0.05, 20), Between()) == Ratio(1.3, 0.05, 20)


def test_a_step_without_the_costs_spread_is_read_by_turn_as_before() -> None:
    # each turn served once at one slot: no spread of a turn about its own mean is known
    one = [_step(1, _one_slot(0, 1.0)[: len(COSTS)], 0)]
    pairing = pairing_of(one)
    assert pairing is not None and pairing.costs.noise is None
    turns = _served_together(1.3)
    window = (turns[0].result.started, turns[-1].result.ended)
    work, _ = step_work(turns, 2, one[0].shape, window, pairing.costs)
    assert not work.blocks and not work.turns


def _noisy_run(speed: float) -> StepWork:
    """A one-slot run whose two blocks read 0.8 and 1.2 × `speed`: ±20% of its own."""
    blocks = (ClusterWork(8.0 * speed, 10.0), ClusterWork(12.0 * speed, 10.0))
    return StepWork(1, {"t": ClusterWork(20.0 * speed, 20.0)}, blocks)


def test_one_slot_runs_that_differ_no_more_than_their_own_noise_add_nothing() -> None:
    assert between_runs([_noisy_run(1.0), _noisy_run(1.02)], 2).variance == 0.0
    far = between_runs([_noisy_run(1.0), _noisy_run(2.0)], 2)
    assert far.variance > 0.1 and far.freedom == 1, "twice as fast is not the runs' own noise"


def _law_sweep(marked: bool) -> list[StepRecord]:
    """One slot twice, then four slots whose turns each take twice their one-slot time, every
    turn waiting 3 s before it is sent; `marked`: recorded to be judged by the law."""
    steps = [
        runs_loop(1, 14, turn_s=1.0, think_s=3.0, index=0),
        runs_loop(1, 14, turn_s=1.0, think_s=3.0, index=1),
        runs_loop(4, 14, turn_s=2.0, think_s=3.0, index=2),
    ]
    mark = {GAINS_KEY: THINK_LAW} if marked else {}
    return [replace(s, measurement={**(s.measurement or {}), **mark}) for s in steps]


def test_a_sweep_whose_think_policy_waits_is_judged_by_the_closed_system_law() -> None:
    steps = _law_sweep(marked=True)
    assert by_think_law(steps[0])
    pairing = pairing_of(steps)
    assert pairing is not None and pairing.law_busy == pytest.approx(0.25)
    four = sweep_figures(steps).steps[2].metrics
    # 4 × (R_1 + Z) / (R_4 + Z) = 4 × 4 / 5
    assert four.capacity_gain == pytest.approx(3.2)
    # capacity is one slot's busy share times the gain: the closed-system model reads it
    assert four.capacity == pytest.approx(0.25 * 3.2)
    # and the sweep says which method judged it
    figures = sweep_figures(steps)
    assert figures.baseline.law_busy == pytest.approx(0.25)
    assert "closed-system law" in interval_method(figures)
    assert "closed-system law" in pairing_sentence(figures)


def test_evidence_without_the_mark_is_judged_by_credited_work_as_before() -> None:
    marked, unmarked = _law_sweep(marked=True), _law_sweep(marked=False)
    pairing = pairing_of(unmarked)
    assert pairing is not None and pairing.law_busy is None
    figures = sweep_figures(unmarked)
    assert figures.baseline.law_busy is None
    assert interval_method(figures) == "paired with one slot, resampled by blocks of time"
    before = figures.steps[2].metrics
    assert before.capacity_gain is not None
    assert before.capacity_gain != pytest.approx(
        sweep_figures(marked).steps[2].metrics.capacity_gain
    )
