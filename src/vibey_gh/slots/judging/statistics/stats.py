"""Small statistics for intervals: no dependency beyond the standard library."""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec


def standard_error(samples: Sequence[float]) -> float | None:
    """Standard error of the mean of `samples`; None with fewer than two."""
    if len(samples) < 2:
        return None
    mean = sum(samples) / len(samples)
    variance = sum((x - mean) ** 2 for x in samples) / (len(samples) - 1)
    return math.sqrt(variance / len(samples))


def normal_quantile(probability: float) -> float:
    """The standard normal quantile (inverse CDF) of `probability`, in (0, 1).

    Newton's method on the upper tail, 0.5·erfc(z/√2) = 1 − p for z ≥ 0 (the other half by
    symmetry): that tail is convex and falling there, so the steps from z = 0 rise to the
    root without overshooting it, and erfc keeps full precision far out. Done here because
    `statistics.NormalDist` imports fractions, decimal and random, a share of the 100 ms
    `slots allowed` has.
    """
    if not 0.0 < probability < 1.0:
        raise ValueError(f"a probability between 0 and 1 is needed, not {probability}")
    tail = min(probability, 1.0 - probability)
    z = 0.0
    for _ in range(200):
        density = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
        step = (0.5 * math.erfc(z / math.sqrt(2.0)) - tail) / density
        z += step
        if abs(step) <= 1e-15 * max(1.0, z):
            break
    return z if probability > 0.5 else -z


def t_quantile(probability: float, dof: int) -> float:
    """Student's t quantile, by the Cornish–Fisher expansion about the normal one.

    Within 1% of the exact value from 3 degrees of freedom on at the usual confidences; the
    batch means have 9.
    """
    if dof <= 0:
        return math.inf
    z = normal_quantile(probability)
    v = float(dof)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
    )


# An interval from fewer sub-windows than this is not trusted: with one or two degrees of
# freedom its width says more about luck than about the runner.
MIN_BATCHES = 5


class Estimate(msgspec.Struct, frozen=True):
    """A throughput and what is known of its noise.

    value: the point; se: its standard error from `batches` batch means (None: known only as a
    point, e.g. a step of the one-pass method). With fewer than MIN_BATCHES batches the
    standard error is not trusted and the estimate counts as a point.
    """

    value: float
    se: float | None = None
    batches: int = 0

    @property
    def has_interval(self) -> bool:
        return self.se is not None and self.batches >= MIN_BATCHES


def log_interval(
    value: float, log_se: float | None, clusters: int, confidence: float
) -> tuple[float, float] | None:
    """Interval of a ratio known by the standard error of its log from `clusters` clusters
    (Student's t on clusters − 1 degrees of freedom); None with fewer than MIN_BATCHES or no
    standard error: such a ratio is a point, not an interval."""
    if log_se is None or clusters < MIN_BATCHES:
        return None
    half = t_quantile(0.5 + confidence / 2.0, clusters - 1) * log_se
    return value * math.exp(-half), value * math.exp(half)


def ratio_interval(
    top: Estimate, bottom: Estimate, confidence: float
) -> tuple[float, float] | None:
    """Interval of top ÷ bottom at `confidence`, from both estimates' own noise.

    First-order (delta method): the ratio's relative variance is the sum of the two relative
    variances, with Welch–Satterthwaite degrees of freedom for Student's t. A point bottom
    leaves exactly top's own interval divided by it. None when the bottom is not positive.
    """
    if bottom.value <= 0:
        return None
    ratio = top.value / bottom.value
    terms: list[tuple[float, int]] = []
    for estimate in (top, bottom):
        if estimate.has_interval and estimate.value > 0 and estimate.se is not None:
            terms.append(((estimate.se / estimate.value) ** 2, estimate.batches - 1))
    if not terms:
        return ratio, ratio
    variance = sum(v for v, _ in terms)
    if variance == 0:
        return ratio, ratio
    dof = variance**2 / sum(v * v / d for v, d in terms)
    half = t_quantile(0.5 + confidence / 2.0, max(1, math.floor(dof))) * ratio * math.sqrt(variance)
    return max(0.0, ratio - half), ratio + half


def binomial_cdf(count: int, share: float) -> list[float]:
    """[P(Binomial(count, share) ≤ k) for k = 0 … count], in one pass over the pmf."""
    if share <= 0.0:
        return [1.0] * (count + 1)
    if share >= 1.0:
        return [0.0] * count + [1.0]
    log_p, log_q = math.log(share), math.log1p(-share)
    head = math.lgamma(count + 1)
    cumulative, total = [], 0.0
    for k in range(count + 1):
        log_pmf = head - math.lgamma(k + 1) - math.lgamma(count - k + 1)
        total += math.exp(log_pmf + k * log_p + (count - k) * log_q)
        cumulative.append(min(1.0, total))
    return cumulative


def quantile_ranks(count: int, share: float, confidence: float) -> tuple[int | None, int | None]:
    """1-based ranks (low, high) of the distribution-free interval for the `share` quantile of
    a sample of `count`: the order statistics X(low) and X(high) hold the true quantile between
    them with probability at least `confidence`, each side missing it at most half the rest.

    The number of values below the true quantile is Binomial(count, share) whatever the
    distribution (hence distribution-free): X(low) lies above the quantile only when fewer than
    `low` values do, X(high) below it only when `high` or more do. A side the sample is too
    small to bound is None (a p95 of 20 turns has no upper end at 90%).
    """
    if count <= 0:
        return None, None
    tail = (1.0 - confidence) / 2.0
    cdf = binomial_cdf(count, share)
    # P(X(low) > quantile) = P(Bin ≤ low − 1): the largest low that keeps it within the tail
    lows = [rank for rank in range(1, count + 1) if cdf[rank - 1] <= tail]
    # P(X(high) < quantile) = P(Bin ≥ high) = 1 − P(Bin ≤ high − 1): the smallest such high
    highs = [rank for rank in range(1, count + 1) if 1.0 - cdf[rank - 1] <= tail]
    return (max(lows) if lows else None), (min(highs) if highs else None)
