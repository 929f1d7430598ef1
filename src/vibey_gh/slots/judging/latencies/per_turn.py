"""`latency_factor` on per-turn ratios: how much slower each turn got, at p95 over the turns.

Each turn's slowdown is its latency at N against its own latency at one slot, matched by turn
id. Turns repeat pass after pass, so each side of a turn is the mean of its repeats (on a log
scale: a geometric mean, so that a ratio and its inverse are alike). The factor is the p95 of
the turns' true slowdowns: the slowdown nearly every turn stays within.

A turn's ratio is measured with noise (a turn's latency varies from one repeat to the next on
both sides), and the p95 of noisy ratios sits above the p95 of the true ones: noise alone
spreads them. So the true slowdowns are read as a common one and a spread between turns
(a random-effects model on the log ratios): τ², the variance of the true log ratios, is what
the ratios' spread holds beyond their noise (DerSimonian–Laird's moment estimate, v being each
turn's noise variance), and the p95 is exp(μ + z₉₅·τ), μ the turns' common log ratio. Read so,
a spread between turns is seen past the slowest turn measured, where the top one of 16 ratios
pulled toward μ (the estimate before this one: each deviation times √(τ² / (τ² + v)), Louis's
constrained Bayes) sat below the truth in a third of trials. That pulled p95 is still taken
where it is higher: a turn far slower than all the others is the p95 of 16 turns, and a
normal spread fitted to all of them puts it lower.

A turn's noise variance v is its repeats' on each side over their count: the variance of one
log latency between a turn's repeats, pooled over turns. At one slot it is also read from the
difference between the earlier and the later half of each turn's requests (the one-slot runs
come one after another): what differs between runs but not between a run's repeats (a speed
of its own, a cache warmed otherwise) is noise a turn's repeats do not show, and read as a
spread between turns it keeps the p95 up where every turn slows alike. The larger of the two
is taken. Where no turn repeats on a side its noise is unknown and nothing is modelled: the
raw ratios' p95, which errs high.

The interval resamples turns (`by_turn.turn_draws`, the same fixed draws): a drawn turn brings
both its sides, and the noise, μ and τ² are estimated again on every replicate, so how well
the noise and the spread are known is carried into the interval. The replicates are skewed,
and the wrong way for their own percentiles: where every turn slows alike a replicate's chance
spread can only raise its p95 (τ² is never below zero), and where one turn is far slower the
replicates that leave it out fall far below. So the high end is read reflected about the point
(the basic bootstrap: the point times how far the replicates fell below it), and the low end as
the lower of the reflected one and the replicates' own (a low end above a limit refuses: the
lower refuses less on chance). On made-up turns (`bench/per_turn_coverage.py`) the high end
then misses a true spread from below in 2% of trials at 92.5%, not 29%, and one turn 1.3× as
slow again in 8%, not 66%, while it is under 1.5× for every turn 1.41× as slow in 69%, not 65%.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from .by_turn import Resampled, turn_draws, weighted_p95

# the standard normal's 95th percentile (`statistics.NormalDist` is not imported on the
# gate's path for one constant)
Z95 = 1.6448536269514722


class TurnRatio(NamedTuple):
    """One turn's log ratio and what its noise is read from: the squared deviations of its log
    latencies from their mean and their count, on each side, and the difference between the
    means of the earlier and later half of its one-slot requests (None under two)."""

    ratio: float
    here_squares: float
    here_count: int
    base_squares: float
    base_count: int
    base_halves: float | None


def _log_mean(values: Sequence[float]) -> float:
    return sum(map(math.log, values)) / len(values)


def _squares(values: Sequence[float]) -> float:
    mean = _log_mean(values)
    return sum((math.log(v) - mean) ** 2 for v in values)


def _halves(values: Sequence[float]) -> float | None:
    """Earlier half's mean log latency − the later half's, scaled to one request's variance
    (divided by √(1/k + 1/(n − k))); None under two requests."""
    half = len(values) // 2
    if half < 1:
        return None
    scale = math.sqrt(1.0 / half + 1.0 / (len(values) - half))
    return (_log_mean(values[:half]) - _log_mean(values[half:])) / scale


def turn_ratios(
    here: Mapping[str, Sequence[float]], base: Mapping[str, Sequence[float]]
) -> list[TurnRatio]:
    """Each shared turn's log ratio (mean log latency here − at one slot) and its noise's
    makings, in turn-id order."""
    shared = sorted(k for k in here if here[k] and base.get(k) and min(*here[k], *base[k]) > 0.0)
    return [
        TurnRatio(
            _log_mean(here[k]) - _log_mean(base[k]),
            _squares(here[k]),
            len(here[k]),
            _squares(base[k]),
            len(base[k]),
            _halves(base[k]),
        )
        for k in shared
    ]


def _weighted_variance(values: Sequence[float], weights: Sequence[int]) -> float | None:
    total = sum(weights)
    if total < 2:
        return None
    mean = sum(w * x for x, w in zip(values, weights, strict=True)) / total
    return sum(w * (x - mean) ** 2 for x, w in zip(values, weights, strict=True)) / (total - 1)


def noise_variances(turns: Sequence[TurnRatio], weights: Sequence[int]) -> list[float] | None:
    """Each turn's noise variance of its log ratio, turn i counting weights[i] times; None
    where a side has no repeats (its noise is unknown)."""
    here_freedom = sum(w * (t.here_count - 1) for t, w in zip(turns, weights, strict=True))
    base_freedom = sum(w * (t.base_count - 1) for t, w in zip(turns, weights, strict=True))
    if not here_freedom or not base_freedom:
        return None
    here = sum(w * t.here_squares for t, w in zip(turns, weights, strict=True)) / here_freedom
    base = sum(w * t.base_squares for t, w in zip(turns, weights, strict=True)) / base_freedom
    halved = [(t.base_halves, w) for t, w in zip(turns, weights, strict=True)]
    between = _weighted_variance(
        [h for h, _ in halved if h is not None], [w for h, w in halved if h is not None]
    )
    base = max(base, between or 0.0)
    if here <= 0.0 and base <= 0.0:
        return None
    return [here / t.here_count + base / t.base_count for t in turns]


def spread(
    ratios: Sequence[float], noises: Sequence[float], weights: Sequence[int]
) -> tuple[float, float]:
    """(common log ratio μ, τ²) of ratios drawn `weights` times with known noise variances
    (> 0): DerSimonian–Laird's moment estimate of τ², never below zero."""
    precision = [w / v for v, w in zip(noises, weights, strict=True)]
    fixed = sum(p * x for p, x in zip(precision, ratios, strict=True)) / sum(precision)
    q = sum(p * (x - fixed) ** 2 for p, x in zip(precision, ratios, strict=True))
    # a turn drawn w times counts as w turns: Σ 1/v² over them is w/v²
    squared = sum(w / v**2 for v, w in zip(noises, weights, strict=True))
    scale = sum(precision) - squared / sum(precision)
    tau2 = max(0.0, (q - (sum(weights) - 1)) / scale) if scale > 0 else 0.0
    pooled = [w / (tau2 + v) for v, w in zip(noises, weights, strict=True)]
    common = sum(p * x for p, x in zip(pooled, ratios, strict=True)) / sum(pooled)
    return common, tau2


def modelled_p95(turns: Sequence[TurnRatio], weights: Sequence[int]) -> float:
    """The p95 of the turns' true slowdowns (turn i counting weights[i] times): exp(μ + z₉₅·τ)
    or, where higher, the nearest-rank p95 of the ratios pulled toward μ (a turn far slower
    than the rest is the p95 of 16 turns, which a normal spread would put lower); where a
    side's noise is unknown, the raw ratios' nearest-rank p95."""
    kept = [(t, w) for t, w in zip(turns, weights, strict=True) if w]
    ratios = [t.ratio for t, _ in kept]
    counts = [w for _, w in kept]
    noises = noise_variances([t for t, _ in kept], counts) if len(kept) > 1 else None
    if noises is None or min(noises) <= 0.0:
        ordered = sorted(((r, i, 1) for i, r in enumerate(ratios)), reverse=True)
        return math.exp(weighted_p95(ordered, [1] * len(kept), counts))
    common, tau2 = spread(ratios, noises, counts)
    # each ratio pulled toward the common one by the share of its deviation that is noise
    pulled = [
        common + (x - common) * math.sqrt(tau2 / (tau2 + v))
        for x, v in zip(ratios, noises, strict=True)
    ]
    ordered = sorted(((r, i, 1) for i, r in enumerate(pulled)), reverse=True)
    top = weighted_p95(ordered, [1] * len(kept), counts)
    return math.exp(max(common + Z95 * math.sqrt(tau2), top))


def reflected(replicates: Sequence[float], point: float) -> list[float]:
    """The replicates as the interval is read from them, sorted: above the middle reflected
    about the point on a log scale (the basic bootstrap: the point times how far the
    replicates fell below it), below it the lower of the reflected one and the replicate's
    own — so that `Resampled.interval` reads at every confidence a high end from the
    reflection and a low end from the lower of the two."""
    logs = sorted(math.log(r) for r in replicates)
    centre, last = math.log(point), len(logs) - 1
    return [
        math.exp(
            min(logs[k], 2.0 * centre - logs[last - k])
            if 2 * k < last
            else 2.0 * centre - logs[last - k]
        )
        for k in range(len(logs))
    ]


def per_turn_ratio(
    here: Mapping[str, Sequence[float]],
    base: Mapping[str, Sequence[float]],
    min_turns: int = 4,
) -> Resampled | None:
    """The p95 of the turns' own slowdowns here against one slot (noise modelled out),
    resampled by turn; None without a shared turn. `count` is the requests here, as for the
    other p95s resampled by turn."""
    turns = turn_ratios(here, base)
    if not turns:
        return None
    point = modelled_p95(turns, [1] * len(turns))
    replicates: tuple[float, ...] = ()
    if len(turns) >= min_turns:
        resampled = [modelled_p95(turns, w) for w in turn_draws(len(turns))]
        replicates = tuple(float(f"{r:.6g}") for r in reflected(resampled, point))
    shared = [k for k in sorted(here) if here[k] and base.get(k)]
    count = max(len(turns), sum(len(here[k]) for k in shared))
    return Resampled(point, len(turns), count, replicates)
