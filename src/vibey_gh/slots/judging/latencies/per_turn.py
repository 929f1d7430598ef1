"""`latency_factor` on per-turn ratios: how much slower each turn got, at p95 over the turns.

Each turn's slowdown is its latency at N against its own latency at one slot, matched by turn
id. Turns repeat pass after pass, so each side of a turn is the mean of its repeats (on a log
scale: a geometric mean, so that a ratio and its inverse are alike). The factor is the p95 of
these ratios over the turns: the slowdown nearly every turn stays within.

A turn's ratio is measured with noise (a turn's latency varies from one repeat to the next on
both sides), and the p95 of noisy ratios sits above the p95 of the true ones: noise alone
spreads them. So before the p95 each turn's log ratio is pulled toward the turns' common one
by the share of its deviation that is noise (empirical Bayes): its deviation is multiplied by
√(τ² / (τ² + v)), v being its own noise variance (the pooled variance of one log latency
between repeats, on each side, over its repeats there) and τ² the spread of the true ratios
between turns (DerSimonian–Laird's moment estimate). The pulled ratios then spread as much as
the true ones are estimated to (Louis's constrained Bayes): neither widened by noise nor
narrowed below the truth, as plain posterior means would be. Where no turn repeats on a side
its noise is unknown and nothing is pulled: the raw ratios' p95, which errs high.

The interval resamples turns (`by_turn.turn_draws`, the same fixed draws): a drawn turn brings
both its sides, and the common ratio, τ² and the pull are estimated again on every replicate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .by_turn import Resampled, turn_draws, weighted_p95

# (log ratio, its noise variance or None where unknown) of one turn
_Turn = tuple[float, float | None]


def _log_mean(values: Sequence[float]) -> float:
    return sum(map(math.log, values)) / len(values)


def _pooled_variance(sides: Sequence[Sequence[float]]) -> float | None:
    """The variance of one log latency between a turn's repeats, pooled over turns (None:
    no turn repeats)."""
    squares = 0.0
    freedom = 0
    for values in sides:
        if len(values) < 2:
            continue
        mean = _log_mean(values)
        squares += sum((math.log(v) - mean) ** 2 for v in values)
        freedom += len(values) - 1
    return squares / freedom if freedom else None


def turn_ratios(
    here: Mapping[str, Sequence[float]], base: Mapping[str, Sequence[float]]
) -> list[_Turn]:
    """Each shared turn's log ratio (mean log latency here − at one slot) and its noise
    variance, in turn-id order."""
    shared = sorted(k for k in here if here[k] and base.get(k) and min(*here[k], *base[k]) > 0.0)
    here_noise = _pooled_variance([here[k] for k in shared])
    base_noise = _pooled_variance([base[k] for k in shared])
    turns: list[_Turn] = []
    for key in shared:
        ratio = _log_mean(here[key]) - _log_mean(base[key])
        noise = None
        if here_noise is not None and base_noise is not None:
            noise = here_noise / len(here[key]) + base_noise / len(base[key])
        turns.append((ratio, noise))
    return turns


def _spread(turns: Sequence[_Turn], weights: Sequence[int]) -> tuple[float, float]:
    """(common log ratio, τ²) of turns drawn `weights` times, all noises known and > 0."""
    noises = [v or 0.0 for _, v in turns]
    precision = [w / v for v, w in zip(noises, weights, strict=True)]
    fixed = sum(p * x for p, (x, _) in zip(precision, turns, strict=True)) / sum(precision)
    q = sum(p * (x - fixed) ** 2 for p, (x, _) in zip(precision, turns, strict=True))
    # a turn drawn w times counts as w turns: Σ 1/v² over them is w/v²
    squared = sum(w / v**2 for v, w in zip(noises, weights, strict=True))
    scale = sum(precision) - squared / sum(precision)
    tau2 = max(0.0, (q - (sum(weights) - 1)) / scale) if scale > 0 else 0.0
    pooled = [w / (tau2 + (v or 0.0)) for (_, v), w in zip(turns, weights, strict=True)]
    common = sum(p * x for p, (x, _) in zip(pooled, turns, strict=True)) / sum(pooled)
    return common, tau2


def shrunk_p95(turns: Sequence[_Turn], weights: Sequence[int]) -> float:
    """The p95 over turns (turn i counting weights[i] times) of their ratios, each pulled
    toward the common one by the share of its deviation that is noise."""
    kept = [(t, w) for t, w in zip(turns, weights, strict=True) if w]
    ratios = [x for (x, _), _ in kept]
    if all(v is not None and v > 0 for (_, v), _ in kept) and len(kept) > 1:
        common, tau2 = _spread([t for t, _ in kept], [w for _, w in kept])
        ratios = [
            common + (x - common) * math.sqrt(tau2 / (tau2 + (v or 0.0))) for (x, v), _ in kept
        ]
    ordered = sorted(((r, i, 1) for i, r in enumerate(ratios)), reverse=True)
    return math.exp(weighted_p95(ordered, [1] * len(kept), [w for _, w in kept]))


def per_turn_ratio(
    here: Mapping[str, Sequence[float]],
    base: Mapping[str, Sequence[float]],
    min_turns: int = 4,
) -> Resampled | None:
    """The p95 over turns of each turn's latency here over its latency at one slot (noise
    pulled out), resampled by turn; None without a shared turn. `count` is the requests here,
    as for the other p95s resampled by turn."""
    turns = turn_ratios(here, base)
    if not turns:
        return None
    point = shrunk_p95(turns, [1] * len(turns))
    replicates: tuple[float, ...] = ()
    if len(turns) >= min_turns:
        replicates = tuple(
            sorted(float(f"{shrunk_p95(turns, w):.6g}") for w in turn_draws(len(turns)))
        )
    shared = [k for k in sorted(here) if here[k] and base.get(k)]
    count = max(len(turns), sum(len(here[k]) for k in shared))
    return Resampled(point, len(turns), count, replicates)
