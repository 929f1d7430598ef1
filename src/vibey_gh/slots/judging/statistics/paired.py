"""Paired, work-normalized capacity: how much one-slot work a step gets done per second.

Every corpus turn has a reference cost: its own service time at one slot, the mean over every
time either one-slot run served it (pooled, not the better run). A step's *capacity* is the
reference-seconds of work it completed per second of wall time, each turn credited over its
own service interval inside the measurement window (a turn half inside is half credited). So
the figure no longer depends on which turns fell into the window: a window of cheap turns
holds many of them, one of costly turns few, and both read the same capacity. One slot's
capacity is about one (its busy share); N slots that each run at the speed of one read N.

The gain of a step over one slot is the ratio of the two capacities. Its noise is estimated
over *clusters*: the turns of one corpus turn id (or of one run, for a corpus of whole runs)
wherever they were served, since the same turns repeat across passes and are not independent
draws. Each cluster contributes its credited work and the worker time it took (its service
time plus the wait after it) to both steps; the delete-one-cluster jackknife of the log ratio
gives the standard error — the delta method for a ratio of cluster sums, done by recomputing
rather than by differentiating. A turn that costs five times another takes about five times
the worker time at any N, so the cost spread of the corpus cancels in each cluster's share
and what is left is the per-turn noise of both steps: the pairing.

Pure functions of plain numbers: `judging.work` reads them out of recorded steps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import msgspec


class ClusterWork(msgspec.Struct, frozen=True):
    """One cluster's share of a step: reference-seconds of work credited, worker-seconds
    spent (service and the wait after it), inside the measurement window."""

    work: float
    time: float


class StepWork(msgspec.Struct, frozen=True):
    """A step as the estimator reads it: its slot count and its clusters' work."""

    slots: int
    clusters: Mapping[str, ClusterWork]

    def capacity(self, left_out: str | None = None) -> float | None:
        """Reference-seconds of work per wall second: N × work ÷ worker time."""
        work = sum(c.work for k, c in self.clusters.items() if k != left_out)
        spent = sum(c.time for k, c in self.clusters.items() if k != left_out)
        return self.slots * work / spent if spent > 0 else None


class Ratio(msgspec.Struct, frozen=True):
    """A ratio of capacities with its noise: `value`, the standard error of its logarithm
    (`log_se`, None when it cannot be told) and how many clusters the top steps served (the
    interval's degrees of freedom rest on them; fewer than five is too few)."""

    value: float
    log_se: float | None
    clusters: int


class _Sums:
    """Work and slot-weighted worker time of pooled steps, in total and per cluster, so a
    left-out cluster's capacity is the total less its own share (linear, not a sum per key)."""

    def __init__(self, steps: Sequence[StepWork]) -> None:
        self.work = 0.0
        self.spent = 0.0
        self.by_key: dict[str, tuple[float, float]] = {}
        for step in steps:
            for key, cluster in step.clusters.items():
                work, spent = self.by_key.get(key, (0.0, 0.0))
                share = cluster.time / step.slots
                self.by_key[key] = (work + cluster.work, spent + share)
                self.work += cluster.work
                self.spent += share

    def capacity(self, left_out: str | None) -> float | None:
        work, spent = self.by_key.get(left_out, (0.0, 0.0)) if left_out is not None else (0.0, 0.0)
        total_spent = self.spent - spent
        return (self.work - work) / total_spent if total_spent > 0 else None


def _log_ratio(top: _Sums, bottom: _Sums | None, left_out: str | None) -> float:
    high = top.capacity(left_out)
    low = bottom.capacity(left_out) if bottom is not None else 1.0
    if high is None or low is None or high <= 0 or low <= 0:
        return math.nan
    return math.log(high / low)


def capacity_ratio(top: Sequence[StepWork], bottom: Sequence[StepWork]) -> Ratio | None:
    """Capacity of `top` (steps of one slot count, pooled) over `bottom`'s (the capacity
    itself when `bottom` is empty), with the delete-one-cluster jackknife standard error of
    its log; None without work."""
    if not top:
        return None
    top_sums = _Sums(top)
    bottom_sums = _Sums(bottom) if bottom else None
    point = _log_ratio(top_sums, bottom_sums, None)
    if not math.isfinite(point):
        return None
    keys = sorted({k for s in (*top, *bottom) for k in s.clusters})
    # the clusters the step itself served: what its degrees of freedom rest on
    served = len({k for s in top for k, c in s.clusters.items() if c.work > 0})
    if len(keys) < 2:
        return Ratio(math.exp(point), None, served)
    leave_one_out = [_log_ratio(top_sums, bottom_sums, key) for key in keys]
    finite = [v for v in leave_one_out if math.isfinite(v)]
    if len(finite) < 2:
        return Ratio(math.exp(point), None, served)
    mean = sum(finite) / len(finite)
    count = len(finite)
    variance = (count - 1) / count * sum((v - mean) ** 2 for v in finite)
    return Ratio(math.exp(point), math.sqrt(variance), served)


class CostFit(msgspec.Struct, frozen=True):
    """A turn's one-slot cost as base + per uncached prompt token + per output token, fitted
    by least squares on the one-slot turns; `r_squared`: the share of their cost's variance
    it explains; `samples`: how many turns it was fitted on."""

    base: float
    per_prompt_token: float
    per_output_token: float
    r_squared: float
    samples: int

    def cost(self, uncached_prompt: int, output: int) -> float:
        return self.base + self.per_prompt_token * uncached_prompt + self.per_output_token * output


def fit_cost(samples: Sequence[tuple[int, int, float]]) -> CostFit | None:
    """Least squares of seconds on (uncached prompt tokens, output tokens) with an intercept;
    None with fewer than four samples or when the tokens cannot tell the two apart."""
    if len(samples) < 4:
        return None
    rows = [(1.0, float(p), float(o)) for p, o, _ in samples]
    ys = [s for _, _, s in samples]
    normal = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    right = [sum(r[i] * y for r, y in zip(rows, ys, strict=True)) for i in range(3)]
    solved = _solve3(normal, right)
    if solved is None:
        return None
    base, per_prompt, per_output = solved
    mean = sum(ys) / len(ys)
    total = sum((y - mean) ** 2 for y in ys)
    residual = sum(
        (y - base - per_prompt * r[1] - per_output * r[2]) ** 2
        for r, y in zip(rows, ys, strict=True)
    )
    r_squared = 1.0 - residual / total if total > 0 else 1.0
    return CostFit(base, per_prompt, per_output, r_squared, len(samples))


def _solve3(matrix: list[list[float]], right: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting on a 3 × 3 system; None when singular."""
    a = [row[:] + [value] for row, value in zip(matrix, right, strict=True)]
    scale = max(abs(v) for row in matrix for v in row) or 1.0
    for col in range(3):
        pivot = max(range(col, 3), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) <= 1e-12 * scale:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        for row in range(col + 1, 3):
            factor = a[row][col] / a[col][col]
            for k in range(col, 4):
                a[row][k] -= factor * a[col][k]
    out = [0.0, 0.0, 0.0]
    for row in (2, 1, 0):
        out[row] = (a[row][3] - sum(a[row][k] * out[k] for k in range(row + 1, 3))) / a[row][row]
    return out


def relative_noise(samples: Mapping[str, Sequence[float]]) -> float | None:
    """The pooled relative spread of repeated one-slot service times of the same turn (how
    far a turn's time strays from its own mean); None with no turn served twice."""
    squares = 0.0
    freedom = 0
    for times in samples.values():
        if len(times) < 2:
            continue
        mean = sum(times) / len(times)
        if mean <= 0:
            continue
        squares += sum((t / mean - 1.0) ** 2 for t in times)
        freedom += len(times) - 1
    return math.sqrt(squares / freedom) if freedom else None
