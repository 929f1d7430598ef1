"""The closed-system model of a sweep: what the steps measured so far say about the rest.

N lanes each alternate a model turn (service time S alone on the runner) and the time away
from it T (tools, think time, the client's own work). The runner serves the turns in flight
by processor sharing at a capacity that stops growing at K turns (its own knee). That network
has a product form (an infinite-server station for the time away, a load-dependent one for
the runner), so the turns per second of N lanes are X(N) = G(N−1) / G(N) with
G(n) = Σ_k S^k / Π_{j≤k} min(j, K) · T^(n−k) / (n−k)!, whatever the spread of S and T about
their means (`bench/think_time.py` holds measured sweeps against it). Throughput grows until
about K·(S + T)/S lanes.

A sweep measures it directly: one slot's paired capacity is its busy share S/(S + T), which
gives T/S; each larger step's capacity gain over one slot is X(N)/X(1), which gives K — once
some step has shown the runner saturating. Before that, every K at or above the largest N
measured fits as well, and the model says nothing about where the knee is (`identified`
False). Fitted, the knee rule run on the model's own curve (each N held to N − 1 with
`min_gain`) is the *predicted* ideal N, which the sweep measures next with its neighbours
(`judging.sweep`); the answer is still only ever a measured step.

Pure functions of plain numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import msgspec

# the runner knees tried when fitting: every twentieth of a slot from one up
KNEE_STEP = 0.05


def lanes_throughput(lanes: int, knee: float, away: float) -> float:
    """Turns per service time S of `lanes` lanes, each away `away` × S between its turns, on a
    runner whose capacity stops growing at `knee` turns in flight (`math.inf`: never)."""
    if lanes <= 0:
        return 0.0

    def normaliser(n: int) -> float:
        total = 0.0
        runner = 1.0
        for at_runner in range(n + 1):
            if at_runner > 0:
                runner /= min(at_runner, knee)
            gone = n - at_runner
            elsewhere = away**gone / math.factorial(gone) if away > 0 else float(gone == 0)
            total += runner * elsewhere
        return total

    return normaliser(lanes - 1) / normaliser(lanes)


def predicted_gain(lanes: int, knee: float, away: float) -> float:
    """The capacity of `lanes` lanes over one lane's, as the model gives it."""
    return lanes_throughput(lanes, knee, away) / lanes_throughput(1, knee, away)


class Prediction(msgspec.Struct, frozen=True):
    """What the model says: `away` (T/S, from one slot's busy share), the runner's knee K
    (`runner_knee`, `math.inf` when no step has shown saturation), `identified` (a step has:
    the model can say where the sweep's knee is), the predicted gain over one slot of every N
    from 1 to `max_slots` (`gains`, index N − 1) and the `ideal` N the knee rule gives on them
    (None when not identified)."""

    away: float
    runner_knee: float
    identified: bool
    gains: tuple[float, ...]
    ideal: int | None

    def gain_at(self, slots: int) -> float | None:
        return self.gains[slots - 1] if 1 <= slots <= len(self.gains) else None

    # By hand: a view for the report, its gains keyed by N and an infinite knee written as null.
    def to_json(self) -> dict[str, object]:
        return {
            "away_over_service": self.away,
            "runner_knee": self.runner_knee if math.isfinite(self.runner_knee) else None,
            "identified": self.identified,
            "ideal": self.ideal,
            "gains": {str(n): g for n, g in enumerate(self.gains, start=1)},
        }


def ideal_on_curve(gains: tuple[float, ...], min_gain: float) -> int:
    """The knee rule on a curve without noise: the last N whose gain over the best N before it
    is at least `min_gain`."""
    ideal, best = 1, gains[0] if gains else 1.0
    for slots, gain in enumerate(gains[1:], start=2):
        if gain >= (1.0 + min_gain) * best:
            ideal = slots
        best = max(best, gain)
    return ideal


def fit_closed_system(
    busy_share: float,
    gains: Mapping[int, float],
    min_gain: float,
    max_slots: int,
    log_se: Mapping[int, float] | None = None,
    level_free: bool = True,
) -> Prediction | None:
    """The model fitted to one slot's busy share (its capacity, 0 < share ≤ 1) and the
    measured gains over one slot by N (N > 1, each > 0); None without a busy share or a gain.

    K is the least-squares fit of the log gains over knees from 1 to the largest N measured in
    steps of `KNEE_STEP`, or unbounded, with a level free within `min_gain` once two steps are
    measured (`level_free`: gains over one slot's runs of the sweep, which drift; gains over
    each step's own one-slot blocks have none to free). It is identified when some step
    served clearly less than N lanes that never wait for each other would (a gain of N):
    short of it by more than twice its standard error (`log_se`, of the log gain) and by more
    than half of `min_gain`. Before that, a knee read into a gain a
    little under N would be noise."""
    measured = {n: g for n, g in gains.items() if n > 1 and g > 0 and math.isfinite(g)}
    if not measured or not busy_share > 0 or not math.isfinite(busy_share) or max_slots < 1:
        return None
    away = max(0.0, 1.0 / min(busy_share, 1.0) - 1.0)
    largest = max(measured)
    candidates = [1.0 + KNEE_STEP * i for i in range(int((largest - 1) / KNEE_STEP) + 1)]
    candidates.append(math.inf)

    def residuals(knee: float) -> list[float]:
        return [math.log(g / predicted_gain(n, knee, away)) for n, g in measured.items()]

    # one slot read off by more than the least gain that counts is no drift: a level left free
    # beyond it fitted gains of +1% and +4% at two and three slots as a knee of two at half
    # the level, and the sweep planned on past a decided "no gain"
    most_level = math.log1p(min_gain)

    def misfit(knee: float) -> float:
        # with two steps or more the level is free within `most_level`: one slot read a
        # little off (drift, a slow start) moves every gain alike, and would bend the knee
        # fitted to them
        found = residuals(knee)
        level = sum(found) / len(found) if len(found) > 1 and level_free else 0.0
        level = max(-most_level, min(most_level, level))
        return sum((r - level) ** 2 for r in found)

    noise = log_se or {}
    saturated = any(
        math.log(n / g) > max(2.0 * noise.get(n, 0.0), math.log1p(min_gain / 2.0))
        for n, g in measured.items()
    )
    # ties go to the larger knee: the smaller would claim a saturation no step showed
    knee = min(reversed(candidates), key=misfit) if saturated else math.inf
    identified = saturated and knee < largest
    curve = tuple(predicted_gain(n, knee, away) for n in range(1, max_slots + 1))
    ideal = ideal_on_curve(curve, min_gain) if identified else None
    return Prediction(away, knee, identified, curve, ideal)
