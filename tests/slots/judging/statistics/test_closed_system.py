from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from vibey_gh.slots.judging.statistics.closed_system import (
    fit_closed_system,
    ideal_on_curve,
    lanes_throughput,
    predicted_gain,
)


def test_without_time_away_lanes_serve_as_many_turns_as_the_runner_holds() -> None:
    assert [lanes_throughput(n, 2, 0.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 2.0, 2.0]
    assert lanes_throughput(5, math.inf, 0.0) == 5.0


def test_a_lane_away_as_long_as_it_is_served_gains_as_queueing_theory_says() -> None:
    # one runner slot, away time = service time: X(1) = 1/2, X(2) = 0.8, X(3) = 15/16
    assert math.isclose(lanes_throughput(1, 1, 1.0), 0.5)
    assert math.isclose(lanes_throughput(2, 1, 1.0), 0.8)
    assert math.isclose(lanes_throughput(3, 1, 1.0), 0.9375)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.floats(0.0, 3.0), st.integers(2, 8))
def test_the_curve_never_falls_and_never_beats_the_runner_or_the_lanes(
    knee: int, away: float, lanes: int
) -> None:
    gain = predicted_gain(lanes, knee, away)
    assert predicted_gain(lanes - 1, knee, away) <= gain + 1e-9
    assert gain <= lanes + 1e-9
    # the runner serves at most `knee` turns at once, one lane alone is busy 1/(1+away)
    assert gain <= knee * (1.0 + away) + 1e-9


def test_ideal_on_curve_is_the_last_step_that_adds_min_gain() -> None:
    assert ideal_on_curve((1.0, 2.0, 2.0, 2.0), 0.10) == 2
    assert ideal_on_curve((1.0, 1.6, 1.875, 1.97), 0.10) == 3
    assert ideal_on_curve((1.0, 1.05, 1.1), 0.10) == 1


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.sampled_from([0.0, 0.5, 1.0]))
def test_a_saturated_curve_is_fitted_back_to_its_knee(knee: int, away: float) -> None:
    """Gains measured up to one slot past where the runner saturates give back its knee, and
    the ideal the knee rule takes on the model's own curve."""
    busy = 1.0 / (1.0 + away)
    top = knee + 1
    while predicted_gain(top, knee, away) > 0.95 * top:  # until a step shows saturation
        top += 1
    gains = {n: predicted_gain(n, knee, away) for n in range(2, top + 1)}
    found = fit_closed_system(busy, gains, 0.10, 12)
    assert found is not None and found.identified
    assert math.isclose(found.runner_knee, knee, abs_tol=0.06)
    curve = tuple(predicted_gain(n, knee, away) for n in range(1, 13))
    assert found.ideal == ideal_on_curve(curve, 0.10)


def test_steps_that_never_waited_for_each_other_say_nothing_of_the_knee() -> None:
    found = fit_closed_system(1.0, {2: 2.0, 3: 2.96, 4: 3.9}, 0.10, 8)
    assert found is not None and not found.identified and found.ideal is None
    # a shortfall inside the steps' own noise is not saturation either
    noisy = fit_closed_system(1.0, {2: 1.8}, 0.10, 8, {2: 0.08})
    assert noisy is not None and not noisy.identified


def test_drift_that_lifts_every_gain_alike_does_not_move_the_knee() -> None:
    lifted = {n: 1.1 * min(n, 4) for n in (2, 3, 4, 5)}
    found = fit_closed_system(1.0, lifted, 0.10, 8)
    assert found is not None and found.ideal == 4


def test_the_level_is_no_freer_than_min_gain_and_fixed_for_own_block_gains() -> None:
    """Gains of +1% and +4% at two and three slots: with the level free they fitted a knee of
    two at half the level (a predicted doubling at N=2), and the sweep planned past a decided
    "no gain". The level moves at most by min_gain; gains over each step's own one-slot blocks
    hold it at one."""
    measured = {2: 1.006, 3: 1.035}
    bounded = fit_closed_system(1.0, measured, 0.10, 4)
    assert bounded is not None and bounded.gains[1] < 1.0 + 2 * 0.10
    fixed = fit_closed_system(1.0, measured, 0.10, 4, level_free=False)
    assert fixed is not None and fixed.identified and fixed.ideal == 1


def test_nothing_to_fit_gives_no_prediction() -> None:
    assert fit_closed_system(0.9, {}, 0.10, 8) is None
    assert fit_closed_system(0.0, {2: 2.0}, 0.10, 8) is None
    assert fit_closed_system(math.nan, {2: 2.0}, 0.10, 8) is None
