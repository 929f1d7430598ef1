"""Capacity under think time by the closed-system law, as pure functions: it is the law (checked
against closed loops on made-up numbers), it does not depend on which runs a step served, and
its interval comes from the turns' own variation."""

from __future__ import annotations

import math
import random

import pytest

from vibey_gh.slots.judging.statistics.stats import t_quantile
from vibey_gh.slots.judging.statistics.think_law import (
    TurnTimes,
    busy_share,
    closed_loop_gain,
    law_gain,
    law_work,
)


def _closed_loop_rate(workers: int, cycle: list[tuple[float, float]], horizon: float) -> float:
    """Turns a second of `workers` each cycling through `cycle` — (think, response) per turn,
    starting at a different turn — counted by walking each worker's clock to `horizon`: the
    law's left-hand side, measured rather than derived."""
    done = 0
    for worker in range(workers):
        clock, place = 0.0, worker * len(cycle) // workers
        while True:
            think, response = cycle[place % len(cycle)]
            clock += think + response
            if clock > horizon:
                break
            done += 1
            place += 1
    return done / horizon


def test_the_law_on_made_up_numbers() -> None:
    # N = 4, R_1 = 1 s, R_N = 2 s, Z = 3 s: 4 × 4 / 5
    assert closed_loop_gain(4, 1.0, 2.0, 3.0) == pytest.approx(3.2)
    step = [TurnTimes(f"t{i}", 2.0, 1.0) for i in range(8)]
    gain = law_gain(4, step, busy_share([1.0] * 8, [3.0] * 8))
    assert gain is not None
    assert gain.value == pytest.approx(3.2)
    assert gain.log_se == pytest.approx(0.0, abs=1e-12)  # every turn slowed alike: no noise


def test_the_law_matches_closed_loops_counted_turn_by_turn() -> None:
    rng = random.Random(3)
    references = [rng.uniform(0.2, 5.0) for _ in range(20)]
    thinks = [rng.choice([0.5, 4.0, 60.0]) for _ in range(20)]
    # at N = 3 each turn is slowed unequally (what it was served beside)
    slowed = [r * rng.uniform(1.1, 2.2) for r in references]
    one = _closed_loop_rate(1, list(zip(thinks, references, strict=True)), 200_000.0)
    three = _closed_loop_rate(3, list(zip(thinks, slowed, strict=True)), 200_000.0)
    served = [
        TurnTimes(f"t{i}", s, r) for i, (s, r) in enumerate(zip(slowed, references, strict=True))
    ]
    gain = law_gain(3, served, busy_share(references, thinks))
    assert gain is not None
    assert gain.value == pytest.approx(three / one, rel=0.01)


def test_a_step_of_long_waiting_runs_reads_as_one_of_busy_runs() -> None:
    references = [1.0] * 10 + [4.0] * 10
    thinks = [1.0] * 10 + [60.0] * 10
    busy = busy_share(references, thinks)
    busy_runs = [TurnTimes(f"t{i}", 1.5 * references[i], references[i]) for i in range(10)]
    waiting_runs = [TurnTimes(f"t{i}", 1.5 * references[i], references[i]) for i in range(10, 20)]
    first, second = law_gain(4, busy_runs, busy), law_gain(4, waiting_runs, busy)
    assert first is not None and second is not None
    assert first.value == pytest.approx(second.value)
    # and it is the corpus's law: R_N = 1.5 R_1 over the corpus's mean turn and think
    mean_r, mean_z = sum(references) / 20, sum(thinks) / 20
    assert first.value == pytest.approx(closed_loop_gain(4, mean_r, 1.5 * mean_r, mean_z))


def test_capacity_is_one_slots_busy_share_times_the_gain() -> None:
    busy = busy_share([1.0, 3.0], [6.0, 2.0])
    assert busy == pytest.approx(4.0 / 12.0)
    one_slot = law_work(1, [TurnTimes("a", 1.0, 1.0), TurnTimes("b", 3.0, 3.0)], busy)
    assert one_slot.capacity() == pytest.approx(busy)
    two = law_work(2, [TurnTimes("a", 1.0, 1.0), TurnTimes("b", 3.0, 3.0)], busy)
    assert two.capacity() == pytest.approx(2 * busy)


def _noisy_step(rng: random.Random, turns: int, slowdown: float, noise: float) -> list[TurnTimes]:
    out = []
    for i in range(turns):
        reference = rng.uniform(0.2, 5.0)
        out.append(
            TurnTimes(f"t{i}", reference * slowdown * math.exp(noise * rng.gauss(0, 1)), reference)
        )
    return out


def test_the_interval_holds_the_true_gain_from_the_turns_own_variation() -> None:
    # each turn at N = 4 takes 1.6 × its one-slot time on average, with per-turn noise; the
    # truth is the law at the expected ratio of sums
    busy, noise, covered, seeds = 0.5, 0.3, 0, 200
    true_ratio = 1.6 * math.exp(noise * noise / 2.0)
    truth = 4.0 / (busy * true_ratio + 1.0 - busy)
    for seed in range(seeds):
        rng = random.Random(seed)
        gain = law_gain(4, _noisy_step(rng, 60, 1.6, noise), busy)
        assert gain is not None and gain.log_se is not None and gain.log_se > 0
        half = t_quantile(0.95, gain.clusters - 1) * gain.log_se
        covered += gain.value * math.exp(-half) <= truth <= gain.value * math.exp(half)
    assert covered >= 0.85 * seeds


def test_the_longer_the_think_time_the_less_the_runner_noise_moves_the_gain() -> None:
    step = _noisy_step(random.Random(7), 60, 1.6, 0.3)
    near_one = law_gain(4, step, 0.5)
    mostly_waiting = law_gain(4, step, 0.01)
    assert near_one is not None and mostly_waiting is not None
    assert near_one.log_se is not None and mostly_waiting.log_se is not None
    assert mostly_waiting.log_se < near_one.log_se / 10


def test_over_the_one_slot_runs_pairs_by_turn() -> None:
    rng = random.Random(11)
    references = {f"t{i}": rng.uniform(0.2, 5.0) for i in range(30)}
    # the one-slot runs' own times about their means; the step 1.5× each reference
    one_slot = [TurnTimes(k, r * rng.uniform(0.9, 1.1), r) for k, r in references.items()]
    step = [TurnTimes(k, 1.5 * r, r) for k, r in references.items()]
    alone = law_gain(3, step, 0.4)
    paired = law_gain(3, step, 0.4, one_slot)
    assert alone is not None and paired is not None
    assert alone.value == pytest.approx(3.0 / (0.4 * 1.5 + 0.6))
    # the one-slot runs' own spread about their references is in the paired interval
    assert paired.log_se is not None and alone.log_se is not None
    assert paired.log_se > alone.log_se
    assert paired.value == pytest.approx(alone.value, rel=0.05)
