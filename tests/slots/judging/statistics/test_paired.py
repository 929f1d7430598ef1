"""Paired, work-normalized capacity as pure functions: the figure does not depend on which
turns fell into the window, its noise is the per-turn noise and not the corpus's cost spread,
and the cost model fits what it is given."""

from __future__ import annotations

import math
import random

import pytest

from vibey_gh.slots.judging.statistics.paired import (
    ClusterWork,
    StepWork,
    capacity_ratio,
    fit_cost,
    own_log_se,
    relative_noise,
)


def _step(slots: int, costs: dict[str, float], passes: dict[str, float], speed: float) -> StepWork:
    """Each turn served `passes[k]` times (a fraction: a partial pass) at `speed` × one slot
    per worker: it takes cost / speed worker-seconds each time."""
    return StepWork(
        slots,
        {k: ClusterWork(costs[k] * n, costs[k] * n / speed) for k, n in passes.items()},
    )


COSTS = {f"t{i}": c for i, c in enumerate([0.2, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0])}


def test_capacity_does_not_depend_on_which_turns_fell_into_the_window() -> None:
    shallow = _step(2, COSTS, {k: (2.0 if c < 2 else 1.0) for k, c in COSTS.items()}, 0.8)
    deep = _step(2, COSTS, {k: (1.0 if c < 2 else 3.0) for k, c in COSTS.items()}, 0.8)
    assert shallow.capacity() == pytest.approx(1.6)
    assert deep.capacity() == pytest.approx(1.6)


def test_the_corpus_cost_spread_is_not_noise_but_per_turn_noise_is() -> None:
    pool = [_step(1, COSTS, dict.fromkeys(COSTS, 2.0), 1.0)]
    exact = capacity_ratio([_step(3, COSTS, dict.fromkeys(COSTS, 3.0), 0.9)], pool)
    assert exact is not None and exact.value == pytest.approx(2.7)
    assert exact.log_se == pytest.approx(0.0, abs=1e-12) and exact.clusters == len(COSTS)
    rng = random.Random(3)
    noisy = StepWork(
        3,
        {
            k: ClusterWork(c * 3, c * 3 / 0.9 * math.exp(0.2 * rng.gauss(0, 1)))
            for k, c in COSTS.items()
        },
    )
    ratio = capacity_ratio([noisy], pool)
    assert ratio is not None and ratio.log_se is not None
    assert 0.01 < ratio.log_se < 0.2


def test_a_steps_own_noise_is_its_blocks_without_the_costs_it_shares_with_other_steps() -> None:
    """Alone, a step's capacity carries its blocks' noise and its reference costs'; compared
    with another step priced at the same costs, only its blocks' part is its own."""
    blocks = (ClusterWork(8.0, 10.0), ClusterWork(12.0, 10.0), ClusterWork(10.0, 10.0))
    # each turn's reference cost known to ±30% (relative variance 0.09), half the work each
    turns = {"a": (15.0, 0.09), "b": (15.0, 0.09)}
    step = StepWork(2, {"a": ClusterWork(15.0, 15.0), "b": ClusterWork(15.0, 15.0)}, blocks, turns)
    alone = capacity_ratio([step], [])
    blocks_only = capacity_ratio([StepWork(2, step.clusters, blocks)], [])
    assert alone is not None and alone.log_se is not None
    assert blocks_only is not None and blocks_only.log_se is not None
    own = own_log_se(step)
    assert own == pytest.approx(blocks_only.log_se) and own > 0.0
    costs = 2 * 0.5**2 * 0.09
    assert alone.log_se == pytest.approx(math.sqrt(own**2 + costs))
    # without blocks there is only the clusters' jackknife to read it from, costs and all
    clustered = StepWork(2, step.clusters)
    assert own_log_se(clustered) == capacity_ratio([clustered], []).log_se  # type: ignore[union-attr]


def test_a_step_with_too_few_clusters_says_how_few() -> None:
    pool = [_step(1, COSTS, dict.fromkeys(COSTS, 2.0), 1.0)]
    few = capacity_ratio([_step(2, COSTS, {"t0": 1.0, "t1": 1.0}, 1.0)], pool)
    assert few is not None and few.clusters == 2


def test_the_cost_model_recovers_a_linear_cost_and_says_how_well_it_fits() -> None:
    rng = random.Random(5)
    samples = []
    for _ in range(40):
        prompt, output = rng.randint(10, 4000), rng.randint(1, 300)
        samples.append((prompt, output, 0.05 + prompt / 8000 + output / 40))
    fit = fit_cost(samples)
    assert fit is not None and fit.r_squared == pytest.approx(1.0)
    assert fit.cost(2000, 100) == pytest.approx(0.05 + 0.25 + 2.5)
    noisy = [(p, o, s * math.exp(0.5 * rng.gauss(0, 1))) for p, o, s in samples]
    worse = fit_cost(noisy)
    assert worse is not None and worse.r_squared < 0.95
    assert fit_cost(samples[:3]) is None
    assert fit_cost([(10, 5, 1.0)] * 6) is None  # the tokens tell nothing apart


def test_relative_noise_is_the_spread_of_a_turn_about_its_own_mean() -> None:
    assert relative_noise({"a": [1.0, 1.0], "b": [5.0, 5.0]}) == 0.0
    assert relative_noise({"a": [0.9, 1.1], "b": [4.5, 5.5]}) == pytest.approx(math.sqrt(0.02))
    assert relative_noise({"a": [1.0]}) is None
