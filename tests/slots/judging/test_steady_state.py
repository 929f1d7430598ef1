"""Steady-state steps as pure functions: the measurement window, batch means, the interval,
decisions on it (qualifies / no gain / inconclusive) and the patience rule (the ideal N:
test_knee.py)."""

from __future__ import annotations

import math

import pytest
from msgspec.structs import replace

from tests.support.slot_builders import answer, same_answers
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.interfaces.slots_interface import TurnResult
from vibey_gh.slots.judging import sweep as sweep_module
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.figures import SweepFigures
from vibey_gh.slots.judging.judge import judge_figures, judge_sweep
from vibey_gh.slots.judging.metrics import (
    batch_throughputs,
    measurement_window,
    ramp_up_end,
    step_metrics,
)
from vibey_gh.slots.judging.records import StepRecord, TurnRecord
from vibey_gh.slots.judging.statistics.stats import (
    Estimate,
    normal_quantile,
    ratio_interval,
    standard_error,
    t_quantile,
)
from vibey_gh.slots.judging.sweep import sweep_steps

GB = 1_000_000_000
MEASURED = {"start": None, "end": None, "turns": 0, "why_ended": "test"}


def closed_loop(
    slots: int,
    turn_seconds: list[float],
    *,
    ramp: float = 0.0,
    index: int = 2,
    text: str = "plain",
) -> StepRecord:
    """`slots` workers back to back; worker w starts at w × ramp and serves turns of the given
    lengths (cycled) until the longest worker ran out; turn ids cycle through t0..t9."""
    turns: list[TurnRecord] = []
    per_worker = len(turn_seconds)
    for worker in range(slots):
        clock = worker * ramp
        for i in range(per_worker):
            length = turn_seconds[(i + worker) % len(turn_seconds)]
            result = answer(text, started=clock, ended=clock + length)
            turns.append(TurnRecord(f"t{(i + worker) % 10}", f"s{i}", worker, result))
            clock += length
    turns.sort(key=lambda t: t.result.ended)
    return StepRecord(
        index=index,
        slots=slots,
        window=4096,
        attempt=1,
        started_at=0.0,
        ended_at=1.0,
        load_seconds=None,
        turns=tuple(turns),
        timeline=(
            (0.0, 4 * GB, 4 * GB, 0.5, 0, 0, None, None),
            (100.0, 4 * GB, 4 * GB, 0.5, 0, 0, None, None),
        ),
        memory_budget_bytes=24 * GB,
        corpus_turns=10,
        measurement=dict(MEASURED),
    )


def test_window_starts_when_every_worker_is_busy_and_ends_when_the_first_runs_out() -> None:
    step = closed_loop(3, [1.0] * 20, ramp=2.0)
    # worker 2 starts last, at 4 s; worker 0 ends first, at 20 s
    assert ramp_up_end(list(step.turns), 3) == 4.0
    assert measurement_window(step.turns, 3) == (4.0, 20.0)
    metrics = step_metrics(step)
    # turns ending in (4, 20]: those ending at 5, 6, …, 20 s, for each of the three workers
    assert metrics.window_turns == 3 * 16
    assert metrics.turns_per_hour == pytest.approx(48 * 3600 / 16)
    assert metrics.duration_s == 16.0


def test_a_step_with_fewer_workers_than_slots_has_no_window() -> None:
    step = replace(closed_loop(2, [1.0] * 5), slots=3)
    assert measurement_window(step.turns, 3) is None
    assert step_metrics(step).turns_per_hour == 0.0


def test_a_steady_runner_has_a_narrow_interval_and_a_noisy_one_a_wide_one() -> None:
    steady = step_metrics(closed_loop(2, [1.0] * 60))
    noisy = step_metrics(closed_loop(2, [0.2, 1.8, 0.5, 2.5, 0.4, 1.6] * 10))
    assert steady.batches == 10 and noisy.batches == 10
    steady_low, steady_high = steady.interval(0.9)
    noisy_low, noisy_high = noisy.interval(0.9)
    assert steady_high - steady_low < noisy_high - noisy_low
    assert noisy_low < noisy.turns_per_hour < noisy_high
    # a wider confidence, a wider interval
    wide_low, wide_high = noisy.interval(0.99)
    assert wide_low < noisy_low and wide_high > noisy_high


def test_batches_count_turns_by_end_time_in_equal_sub_windows() -> None:
    ends = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
    assert batch_throughputs(ends, 0.0, 6.0) == [3 * 3600 / 3.0, 3 * 3600 / 3.0]
    assert batch_throughputs(ends[:5], 0.0, 6.0) == []  # too few turns for two batches


def test_t_quantile_is_close_to_the_table() -> None:
    assert t_quantile(0.95, 9) == pytest.approx(1.833, abs=0.005)
    assert t_quantile(0.975, 9) == pytest.approx(2.262, abs=0.01)
    assert t_quantile(0.95, 1000) == pytest.approx(1.645, abs=0.005)
    assert standard_error([1.0]) is None


def test_one_pass_steps_keep_their_old_throughput_and_have_no_interval() -> None:
    step = replace(closed_loop(2, [1.0] * 10), measurement=None)
    metrics = step_metrics(step)
    assert metrics.turns_per_hour == pytest.approx(20 * 3600 / 10.0)
    assert not metrics.has_interval
    assert metrics.interval(0.9) == (metrics.turns_per_hour, metrics.turns_per_hour)


def _sweep(*noisy: list[float]) -> list[StepRecord]:
    """Two one-slot runs of 1 s turns, then one step per given turn-length list at N=2…"""
    one = [closed_loop(1, [1.0] * 60, index=i) for i in range(2)]
    rest = [closed_loop(2 + k, lengths, index=2 + k) for k, lengths in enumerate(noisy)]
    return one + rest


def test_labels_follow_the_gain_interval() -> None:
    bounds = Bounds(min_gain=0.10, confidence=0.9)
    # N=2 at 1 s turns: +100% with a narrow interval; N=3 at 2.7 s turns: +11%, noisy
    steps = _sweep([1.0] * 60, [0.9, 4.5, 1.2, 4.2] * 15)
    judged = judge_sweep(steps, bounds)
    two, three = judged.verdicts[2], judged.verdicts[3]
    assert two.label == "qualifies"
    assert two.gain_low is not None and two.gain_low >= 0.10
    assert two.gain_low <= two.gain <= two.gain_high  # type: ignore[operator]
    assert three.gain_low is not None and three.gain_high is not None
    assert three.gain_low < 0.10 <= three.gain_high
    assert three.label == "inconclusive" and not three.qualifies
    assert two.confidence == 0.9
    data = two.to_json()
    assert {"gain_low", "gain_high", "confidence"} <= set(data)


def test_no_gain_only_when_the_whole_interval_is_below_min_gain() -> None:
    bounds = Bounds(min_gain=0.10)
    steps = _sweep([2.0] * 60)  # N=2 at half speed per turn: +0%
    verdict = judge_sweep(steps, bounds).verdicts[2]
    assert verdict.gain_high is not None and verdict.gain_high < 0.10
    assert verdict.label == "no gain"


def test_an_inconclusive_step_neither_strikes_nor_resets_patience(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # patience alone: no closed-system model to end the sweep at the first flat step
    monkeypatch.setattr(sweep_module, "sweep_prediction", lambda *_args: None)
    bounds = Bounds(min_gain=0.10, patience=2)
    # N=2: 2 turns/s, the best so far; a 10% gain over it is 2.2 turns/s
    three = [1.5] * 60  # 2 turns/s: clearly below
    four = [0.5] * 15 + [3.1] * 15 + [0.7] * 15 + [3.0] * 15  # about 2.2 turns/s, wide
    five = [2.5] * 60  # 2 turns/s again
    steps = _sweep([1.0] * 60, three, four, five)
    asked, stop = _drive_and_close(steps, bounds)
    # N=3 (flat) strikes, N=4 (noisy) is inconclusive and leaves the count, N=5 strikes again;
    # then one slot closes the sweep (the drift check)
    assert asked == [1, 1, 2, 3, 4, 5, 1]
    assert stop is not None and "2 steps without a 10% gain" in stop
    four_verdict = judge_sweep(steps[:5], bounds).verdicts[4]
    assert four_verdict.turns_per_hour_low < 7920 <= four_verdict.turns_per_hour_high


def test_a_marginal_step_short_of_min_gain_counts_toward_patience(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """N=4 serves +9.6% over N=2, known to about ±0.5%: inside the indifference zone and short
    of 10%, so its step stopped there (`stepping.stopping`); the sweep counts it toward
    patience, as a step measured to its cap, and stops after it."""
    monkeypatch.setattr(sweep_module, "sweep_prediction", lambda *_args: None)
    bounds = Bounds(min_gain=0.10, patience=2)
    marginal = [0.6, 3.0, 0.8, 2.9] * 15
    steps = _sweep([1.0] * 60, [1.5] * 60, marginal)
    asked, stop = _drive_and_close(steps, bounds)
    # the sweep stopped after N=4: one slot closes it (the drift check)
    assert asked == [1, 1, 2, 3, 4, 1]
    assert stop is not None and "2 steps without a 10% gain" in stop


def _drive_and_close(steps: list[StepRecord], bounds: Bounds) -> tuple[list[int], str | None]:
    """Feed `steps` to a sweep, then a closing one-slot run once it asks for one: the slot
    counts it asked for, and why it stopped (None: it stopped before the closing run)."""
    generator = sweep_steps(lambda: bounds)
    asked = [next(generator)]
    for step in steps:
        try:
            asked.append(generator.send(step))
        except StopIteration:
            return asked, None
    try:
        generator.send(closed_loop(1, [1.0] * 60, index=len(steps)))
    except StopIteration as done:
        return asked, str(done.value)
    return asked, None


def test_first_answers_decide_fidelity_in_a_step_that_repeats_turns() -> None:
    one = closed_loop(1, [1.0] * 20, index=0)
    again = closed_loop(1, [1.0] * 20, index=1)
    # N=2 answers every turn the same the first time and differently on repeats
    step = closed_loop(2, [1.0] * 20)
    seen: set[str] = set()
    turns = []
    for turn in step.turns:
        text = "plain" if turn.turn_id not in seen else "changed"
        seen.add(turn.turn_id)
        result = turn.result
        turns.append(replace(turn, result=_with_text(result, text)))
    step = replace(step, turns=tuple(turns))
    verdict = judge_sweep([one, again, step], Bounds()).verdicts[2]
    assert verdict.agreement is not None and verdict.agreement.exact == 1.0


def _with_text(result: TurnResult, text: str) -> TurnResult:
    return replace(result, text=text)


def test_same_answers_helper_still_builds_one_pass_steps() -> None:
    assert len(same_answers(4)) == 4


def test_a_steady_state_step_too_short_for_an_interval_is_inconclusive() -> None:
    steps = _sweep([0.5] * 2)  # N=2: four turns in its window, far too few for batches
    verdict = judge_sweep(steps, Bounds()).verdicts[2]
    assert verdict.gain is not None and verdict.gain > 0.10
    assert verdict.label == "inconclusive" and not verdict.qualifies
    assert verdict.gain_low is None and verdict.gain_high is None


# --- a gain is a ratio of two measured throughputs: its interval carries both noises


def test_a_point_bar_leaves_exactly_the_steps_own_interval() -> None:
    top = Estimate(12_000.0, 500.0, 10)
    low, high = ratio_interval(top, Estimate(10_000.0), 0.9)  # type: ignore[misc]
    half = t_quantile(0.95, 9) * 500.0
    assert low == pytest.approx((12_000.0 - half) / 10_000.0)
    assert high == pytest.approx((12_000.0 + half) / 10_000.0)


def test_a_noisy_bar_widens_the_gain_interval() -> None:
    top = Estimate(12_000.0, 500.0, 10)
    point = ratio_interval(top, Estimate(10_000.0), 0.9)
    noisy = ratio_interval(top, Estimate(10_000.0, 800.0, 10), 0.9)
    assert point is not None and noisy is not None
    assert noisy[0] < point[0] and noisy[1] > point[1]
    # both relative noises add: 500/12k and 800/10k
    relative = math.hypot(500.0 / 12_000.0, 800.0 / 10_000.0)
    assert (noisy[1] - noisy[0]) / 2 / 1.2 > relative  # t > 1 on top of it


def test_too_few_batches_count_as_a_point_and_no_bar_gives_none() -> None:
    top = Estimate(12_000.0, 500.0, 10)
    assert ratio_interval(top, Estimate(10_000.0, 5_000.0, 3), 0.9) == ratio_interval(
        top, Estimate(10_000.0), 0.9
    )
    assert ratio_interval(top, Estimate(0.0), 0.9) is None
    assert ratio_interval(Estimate(5.0), Estimate(4.0), 0.9) == (1.25, 1.25)


def test_the_welch_degrees_of_freedom_follow_the_noisier_side() -> None:
    # the bar's noise dominates and it has few batches: t is that of few degrees of freedom
    top = Estimate(10_000.0, 1.0, 10)
    bar = Estimate(10_000.0, 1_000.0, 5)
    low, high = ratio_interval(top, bar, 0.9)  # type: ignore[misc]
    half = (high - low) / 2
    assert half == pytest.approx(t_quantile(0.95, 4) * math.hypot(1e-4, 0.1), rel=1e-3)


def _with_noisy_bar(figures: SweepFigures, se: float) -> SweepFigures:
    return replace(figures, baseline=replace(figures.baseline, best_one_slot_se=se))


def _unpaired(figures: SweepFigures) -> SweepFigures:
    """The figures as evidence that cannot be paired is judged: on counted turns."""
    steps = tuple(
        replace(s, metrics=replace(s.metrics, capacity_gain=None, capacity_gain_se=None))
        for s in figures.steps
    )
    return replace(figures, steps=steps)


def test_a_step_that_clears_a_steady_bar_is_inconclusive_against_a_noisy_one() -> None:
    bounds = Bounds(min_gain=0.10, confidence=0.9)
    # one slot: 1 s turns (3,600 turns/h); N=2 at 1.6 s turns: +25%; judged unpaired, the
    # bar's own noise widens the gain (paired, it is in the clusters' spread)
    figures = _unpaired(sweep_figures(_sweep([1.6] * 60)))
    steady = judge_figures(figures, bounds).verdicts[2]
    assert steady.label == "qualifies"
    bar = figures.baseline.best_one_slot_turns_per_hour
    noisy = judge_figures(_with_noisy_bar(figures, 0.12 * bar), bounds).verdicts[2]
    assert noisy.label == "inconclusive" and not noisy.qualifies
    assert noisy.gain_low is not None and noisy.gain_low < 0.10 <= noisy.gain_high  # type: ignore[operator]
    assert noisy.gain == pytest.approx(steady.gain)


def test_the_baseline_keeps_the_better_runs_own_noise() -> None:
    steady = closed_loop(1, [1.0] * 60, index=0)
    faster_noisy = closed_loop(1, [0.5, 1.0] * 30, index=1)
    figures = sweep_figures([steady, faster_noisy])
    assert figures.baseline.best_one_slot_batches == 10
    assert figures.baseline.best_one_slot_se is not None and figures.baseline.best_one_slot_se > 0
    # and it survives the figures cache's JSON
    again = checked(as_json(figures), SweepFigures)
    assert again.baseline == figures.baseline


def test_figures_kept_before_the_bar_had_noise_still_read() -> None:
    data = as_json(sweep_figures(_sweep([1.0] * 60)))
    del data["baseline"]["best_one_slot_se"], data["baseline"]["best_one_slot_batches"]
    old = checked(data, SweepFigures)
    assert old.baseline.best_one_slot_se is None
    assert judge_sweep(_sweep([1.0] * 60), Bounds()).verdicts[2].qualifies


@pytest.mark.parametrize(
    ("probability", "quantile"),
    [
        (0.5, 0.0),
        (0.9, 1.2815515655446004),
        (0.95, 1.6448536269514722),
        (0.975, 1.959963984540054),
        (0.995, 2.5758293035489004),
        (1e-9, -5.997807015007687),
    ],
)
def test_the_normal_quantile_matches_the_tables(probability: float, quantile: float) -> None:
    assert normal_quantile(probability) == pytest.approx(quantile, rel=1e-12, abs=1e-12)
    assert normal_quantile(1.0 - probability) == pytest.approx(-quantile, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("probability", [0.0, 1.0, -0.1, 1.5])
def test_the_normal_quantile_needs_a_probability_inside_0_and_1(probability: float) -> None:
    with pytest.raises(ValueError, match="a probability between 0 and 1"):
        normal_quantile(probability)
