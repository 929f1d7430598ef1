"""p95s resampled by turn: intervals that know a step replays the same turns again and again.

A steady-state step sends each corpus turn many times (one pass after another), so its
requests are not independent samples: a long prompt is long every time it comes round. An
interval that counts each request as a draw is too narrow. Here the draws are the turns: a
cluster bootstrap resamples turn ids with replacement (each drawn id brings all its
requests), recomputes the p95 on what was drawn, and the interval is the spread of those
p95s. The seed is fixed, so the same evidence always gives the same interval.

`latency_factor` was paired the same way (`paired_p95_ratio`: what figures stored before
per-turn ratios, `per_turn`, hold as `factor_by_turn`, and are judged on): the p95 of a
step's latencies over the p95 of the same turns' latencies at one slot (the one-slot runs
pooled), the same ids drawn on both sides of every replicate. Which turns happen to be
drawn — long prompts or short — then moves both p95s together and cancels out of the ratio;
what is left is how much slower the same work got. (A p95 of each request's own ratio would
not do: a turn's latency varies from one request to the next at one slot too, so one slot
would be "slower" than itself at its p95.)

Inter-token latency is resampled the same way (`grouped_gaps_p95`): a turn's gaps come as
(bucket, count) pairs, and a drawn turn brings all of them, in every request it was sent in,
so the stalls of one long prompt count once per draw of that turn, not as many independent
gaps.

What is kept of a resampling is small and of fixed size: the point, the number of turns and of
values, and the replicates' p95s, sorted (`REPLICATES` of them).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Mapping, Sequence
from typing import Annotated

import msgspec
from msgspec import Meta

from ....interfaces.token_gaps import Gaps, merged, upper_edge
from ..statistics.figure_fields import Amount, Count
from .gap_sample import quantile_ranks_of

P95 = 0.95
REPLICATES = 200
SEED = 35
# fewer turns than this cannot show how a p95 varies from one turn to another
MIN_TURNS = 4


# a value and how many times a turn holds it (1 for latencies, a bucket's count for gaps)
Counted = Sequence[tuple[float, int]]


def weighted_p95(
    ordered: Sequence[tuple[float, int, int]], sizes: Sequence[int], weights: Sequence[int]
) -> float:
    """The nearest-rank p95 of values (sorted high to low, each with its turn's index and how
    many times it is there; turn i holds sizes[i] values) when turn i counts weights[i] times:
    walk down from the top, the p95 is near it."""
    total = sum(map(operator.mul, weights, sizes))
    above = total - max(1, math.ceil(P95 * total))  # values strictly above the p95's rank
    seen = 0
    for value, turn, times in ordered:
        seen += weights[turn] * times
        if seen > above:
            return value
    return ordered[-1][0]


_MASK = (1 << 64) - 1


def _splitmix64(state: int) -> tuple[int, int]:
    """(next state, 64 random bits): SplitMix64. Written out rather than `random`'s so that
    the same evidence gives the same interval on every Python (`random.choices` is free to
    change how it draws), and `slots allowed`, which may make figures, does not import it."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


@functools.lru_cache(maxsize=32)
def turn_draws(turns: int) -> tuple[tuple[int, ...], ...]:
    """How often each of `turns` turns is drawn in each replicate: the same for every
    resampling of that many turns (the seed is fixed), so made once."""
    state = SEED
    draws = []
    for _ in range(REPLICATES):
        weights = [0] * turns
        for _ in range(turns):
            state, bits = _splitmix64(state)
            weights[(bits * turns) >> 64] += 1  # uniform over the turns
        draws.append(tuple(weights))
    return tuple(draws)


def _descending(groups: Sequence[Counted]) -> list[tuple[float, int, int]]:
    return sorted(((v, i, n) for i, values in enumerate(groups) for v, n in values), reverse=True)


def _counted(values: Sequence[float]) -> Counted:
    return [(v, 1) for v in values]


class Resampled(msgspec.Struct, frozen=True):
    """A p95 resampled by turn: the point, `turns` distinct turns holding `count` values, and
    the sorted p95s of the bootstrap replicates (empty: too few turns to resample)."""

    point: Amount
    turns: Annotated[int, Meta(ge=1)]
    count: Count
    replicates: Annotated[tuple[Amount, ...], Meta(max_length=REPLICATES)]

    def __post_init__(self) -> None:
        if list(self.replicates) != sorted(self.replicates):
            raise ValueError("replicates: expected sorted numbers")
        if self.count < self.turns:
            raise ValueError(f"expected {self.turns} turn(s) of at least as many values")

    def interval(self, confidence: float) -> tuple[float | None, float | None]:
        """(low, high) at `confidence`; None for a side it cannot bound: too few turns, or too
        few values for a p95 to have that side at all (as `quantile_ranks` says for
        independent values: resampling turns cannot see above the largest value either)."""
        if not self.replicates:
            return None, None
        low_rank, high_rank = quantile_ranks_of(self.count, P95, confidence)
        tail = (1.0 - confidence) / 2.0
        last = len(self.replicates) - 1
        low = self.replicates[min(last, math.floor(tail * len(self.replicates)))]
        high = self.replicates[max(0, min(last, math.ceil((1.0 - tail) * last)))]
        return (low if low_rank else None), (high if high_rank else None)


def _replicates(statistic: _Statistic, turns: int) -> tuple[float, ...]:
    if turns < MIN_TURNS:
        return ()
    # six figures are more than a p95's interval can tell, and keep the figures small
    return tuple(sorted(float(f"{statistic(weights):.6g}") for weights in turn_draws(turns)))


class _Statistic:
    """A p95 (or a ratio of two) of grouped values under weights per group."""

    def __init__(self, here: Sequence[Counted], base: Sequence[Counted] | None):
        self.here = _descending(here)
        self.here_sizes = [sum(n for _, n in values) for values in here]
        self.base = _descending(base) if base is not None else None
        self.base_sizes = [sum(n for _, n in values) for values in base or ()]

    def __call__(self, weights: Sequence[int]) -> float:
        value = weighted_p95(self.here, self.here_sizes, weights)
        if self.base is None:
            return value
        under = weighted_p95(self.base, self.base_sizes, weights)
        return value / under if under > 0 else math.inf


def grouped_p95(groups: Mapping[str, Sequence[float]]) -> Resampled | None:
    """The p95 of every value, resampled by group (turn id); None without a value."""
    return _grouped([_counted(values) for _, values in sorted(groups.items()) if values])


def grouped_gaps_p95(groups: Mapping[str, Sequence[Gaps]]) -> Resampled | None:
    """The p95 of every gap between tokens (each read as its bucket's upper edge, as
    `GapSample` reads it), resampled by turn id: a drawn turn brings the gaps of every request
    it was sent in. None without a gap."""
    kept = [
        [(upper_edge(bucket), count) for bucket, count in merged(gaps)]
        for _, gaps in sorted(groups.items())
    ]
    return _grouped([values for values in kept if values])


def _grouped(kept: Sequence[Counted]) -> Resampled | None:
    if not kept:
        return None
    statistic = _Statistic(kept, None)
    point = statistic([1] * len(kept))
    count = sum(statistic.here_sizes)
    return Resampled(point, len(kept), count, _replicates(statistic, len(kept)))


def paired_p95_ratio(
    here: Mapping[str, Sequence[float]], base: Mapping[str, Sequence[float]]
) -> Resampled | None:
    """The p95 of `here` over the p95 of `base` on the turns both hold, resampled by turn with
    the same draw on both sides; None without a shared turn or with a base of zero."""
    shared = sorted(k for k in here if here[k] and base.get(k))
    if not shared:
        return None
    statistic = _Statistic([_counted(here[k]) for k in shared], [_counted(base[k]) for k in shared])
    point = statistic([1] * len(shared))
    if not math.isfinite(point):
        return None
    count = sum(len(here[k]) for k in shared)
    reps = _replicates(statistic, len(shared))
    # a draw whose base p95 is zero has no ratio: then no interval, rather than a narrower one
    return Resampled(point, len(shared), count, reps if all(map(math.isfinite, reps)) else ())
