"""Runs per hour from run progress: the response-time law of a closed loop, no counting noise,
no run half counted, and an interval that covers the true rate as often as it says."""

from __future__ import annotations

import random

import pytest

from tests.support.slot_builders import answer, runs_loop
from vibey_gh.slots.judging.metrics import batch_standard_error, batch_throughputs
from vibey_gh.slots.judging.records import TurnRecord
from vibey_gh.slots.judging.runs import completed_run_ends
from vibey_gh.slots.judging.statistics.run_rate import run_cycles, run_rate
from vibey_gh.slots.judging.statistics.stats import Estimate, ratio_interval


@pytest.mark.parametrize(
    ("workers", "turn_s", "think_s"), [(1, 1.0, 0.0), (3, 0.7, 1.3), (7, 0.2, 2.9)]
)
def test_steady_workers_complete_n_over_run_latency_plus_think(
    workers: int, turn_s: float, think_s: float
) -> None:
    step = runs_loop(workers, 60, turn_s=turn_s, think_s=think_s)
    rate = run_rate(step.turns, workers)
    assert rate is not None
    # X = N / (R + Z): a run is 2 turns (R = 2·turn_s) after 2 waits (Z = 2·think_s)
    law = workers * 3600.0 / (2 * turn_s + 2 * think_s)
    assert rate.per_hour == pytest.approx(law, rel=1e-9)
    assert rate.batches == 10 and rate.se == pytest.approx(0.0, abs=law * 1e-9)


def test_counting_the_runs_of_each_batch_measures_the_counting_not_the_runner() -> None:
    # a worker cycling every 4 s exactly, batches 3.6 s wide: each batch holds 0 or 1 runs
    step = runs_loop(1, 10, think_s=1.0)
    rate = run_rate(step.turns, 1)
    assert rate is not None and rate.batches >= 2
    start, end = rate.window
    ends = completed_run_ends(step.turns, start, end)
    counted = batch_throughputs(ends, start, end)
    assert counted and (batch_standard_error(counted, start, end) or 0.0) > 0.05 * rate.per_hour
    assert rate.se == pytest.approx(0.0, abs=1e-6)


def test_a_run_cut_off_is_not_half_counted_and_a_failed_run_is_worth_nothing() -> None:
    step = runs_loop(2, 20, think_s=1.0, failed=frozenset({(0, 5)}))
    # worker 1 loses its last run's closing turn: the window ends at its last closed run
    cut = tuple(t for t in step.turns if not (t.worker == 1 and t.result.ended > 76.0))
    rate = run_rate(cut, 2)
    assert rate is not None
    assert rate.window[1] == pytest.approx(76.0)
    cycles = run_cycles(cut)
    assert [c.credit for c in cycles[0]].count(0.0) == 1
    whole = run_rate(step.turns, 2)
    assert whole is not None and rate.per_hour < whole.per_hour  # the failed run counts nothing


def test_no_window_until_every_worker_closed_a_run() -> None:
    step = runs_loop(2, 3)
    first_worker_only = tuple(t for t in step.turns if t.worker == 0)
    assert run_rate(first_worker_only, 2) is None


def closed_loop(workers: int, runs: int, rng: random.Random) -> list[TurnRecord]:
    """Workers replaying two-turn runs, every turn and every wait drawn at random (means 1 s
    and 2 s), as independent lanes do: the true rate is workers / (2·1 + 2·2) runs a second."""
    turns: list[TurnRecord] = []
    for worker in range(workers):
        clock = 0.0
        for run in range(runs):
            for turn in range(2):
                wait = rng.expovariate(1 / 2.0)
                clock += wait
                took = rng.lognormvariate(0.0, 0.5) / 1.1331484530668263  # mean 1 s
                result = answer("plain", started=clock, ended=clock + took)
                closes = turn == 1
                turns.append(
                    TurnRecord(f"r{run}#{turn}", f"w{worker}r{run}", worker, result, wait, closes)
                )
                clock += took
    return sorted(turns, key=lambda t: t.result.ended)


def test_the_interval_covers_the_true_rate_about_as_often_as_it_says() -> None:
    rng = random.Random(20261201)
    truth = 4 * 3600.0 / 6.0
    covered, trials = 0, 200
    for _ in range(trials):
        rate = run_rate(closed_loop(4, 40, rng), 4)
        assert rate is not None and rate.se is not None
        low, high = ratio_interval(
            Estimate(rate.per_hour, rate.se, rate.batches), Estimate(truth), 0.9
        ) or (0, 0)
        covered += low <= 1.0 <= high
    # a 90% interval: well above chance, and not so wide that it always covers
    assert 0.8 * trials <= covered <= 0.98 * trials
