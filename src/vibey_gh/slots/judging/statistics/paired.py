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

That holds at one slot, but not where turns share the runner. A turn's service time at N > 1
depends on what it was served beside: on a CPU a cheap turn beside a long prompt's prefill
waits for it (the demo's 2 s turn took 11.5 s next to a 13 s one, which took its own time), so
one cluster reads slow and its neighbour fast, though together they did the work of both in
their time. The delete-one-cluster jackknife counts that split as noise and read the demo's
N = 2 at ±15% standard error where its capacity varied by about 6%. So a step measured with
its window cut into equal *blocks* of wall time (`StepWork.blocks`, each holding its share of
every turn's credit and worker time) takes its own noise from the delete-one-block jackknife
— the capacity of consecutive stretches of time, whatever the split between turns served
together — and the reference costs' noise separately: each turn's cost is the mean of its
one-slot times, so its relative variance is the turns' spread squared over its samples, and a
step's log capacity moves with it by that turn's share of the step's work (`StepWork.turns`).
Two steps compared with each other move together by the shares they have in common, so
their paired variance is both steps' block variances and Σ (share − share')² × variance; the
pooled one-slot runs set the costs, so their own noise is that term (`sets_costs`). Degrees
of freedom: Welch–Satterthwaite over the blocks (the costs' term counted as known). What no
step's blocks can see — how far the machine moved between runs — is read from one slot's
repeated runs (`between_runs`) and added to a step's gain by `across_runs`.

Pure functions of plain numbers: `judging.work` reads them out of recorded steps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import msgspec
from msgspec import field

from .stats import normal_quantile, t_quantile


class ClusterWork(msgspec.Struct, frozen=True):
    """One cluster's share of a step: reference-seconds of work credited, worker-seconds
    spent (service and the wait after it), inside the measurement window."""

    work: float
    time: float


class StepWork(msgspec.Struct, frozen=True):
    """A step as the estimator reads it: its slot count and its clusters' work; where known,
    its window's equal `blocks` of wall time (each block's credited work and worker time, in
    order), each turn id's credited work with the relative variance of its reference cost
    (`turns`), and whether its turns set the reference costs (`sets_costs`: the pooled
    one-slot runs, whose own noise is the costs'). Without blocks the clusters' jackknife
    reads its noise, as evidence was read before blocks."""

    slots: int
    clusters: Mapping[str, ClusterWork]
    blocks: tuple[ClusterWork, ...] = ()
    turns: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    sets_costs: bool = False
    # an interleaved step's one-slot blocks, each beside the block of `blocks` at its place:
    # its blocks' noise is read pair by pair against them (`judging.interleaved`)
    reference: tuple[ClusterWork, ...] = ()

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
    if _blocked(top, bottom):
        return _blocked_ratio(top, bottom)
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


def _blocked(top: Sequence[StepWork], bottom: Sequence[StepWork]) -> bool:
    """Every step's noise can be read from its blocks (or, setting the costs, from theirs)."""
    return all(s.blocks for s in top) and all(s.blocks or s.sets_costs for s in bottom)


def pooled_capacity(steps: Sequence[StepWork]) -> float | None:
    """The steps' capacity pooled: their work over their worker time per slot."""
    work = sum(c.work for s in steps for c in s.clusters.values())
    spent = sum(c.time / s.slots for s in steps for c in s.clusters.values())
    return work / spent if spent > 0 else None


def _block_variance(steps: Sequence[StepWork]) -> tuple[float, int]:
    """The delete-one-block jackknife variance of the steps' pooled log capacity, and its
    degrees of freedom (blocks − 1); (0, 0) for steps that set the costs. Where the steps
    interleaved, a block is left out with the one-slot block beside it, and what varies is the
    log of the blocks' pooled capacity over the one-slot blocks' (the level the step's work is
    scaled to is one number for the whole step)."""
    if any(s.reference for s in steps):
        return _paired_block_variance(steps)
    blocks = [(b.work, b.time / s.slots) for s in steps if not s.sets_costs for b in s.blocks]
    work = sum(w for w, _ in blocks)
    spent = sum(t for _, t in blocks)
    left = [math.log((work - w) / (spent - t)) for w, t in blocks if spent - t > 0 and work - w > 0]
    if len(left) < 2:
        return 0.0, 0
    mean = sum(left) / len(left)
    count = len(left)
    return (count - 1) / count * sum((v - mean) ** 2 for v in left), count - 1


# an interleaved step's interval needs this many pairs of blocks: with five, the jackknife of
# a ratio of sums held the true gain in 64 of 84 simulated demo steps (76%), and N=2 qualified
# with no gain in 3 of 200 sweeps (`bench/paired_sweeps.py --interleave 4`, performance.md)
MIN_PAIRS = 8


def _paired_block_variance(steps: Sequence[StepWork]) -> tuple[float, int]:
    """The delete-one-pair jackknife variance (`_block_variance`); (0, 0), no interval, with
    fewer than MIN_PAIRS pairs."""
    pairs = [
        (b.work, b.time / s.slots, r.work, r.time)
        for s in steps
        for b, r in zip(s.blocks, s.reference, strict=False)
    ]
    sums = [sum(p[i] for p in pairs) for i in range(4)]
    left = []
    for pair in pairs:
        rest = [total - part for total, part in zip(sums, pair, strict=True)]
        if min(rest) > 0:
            left.append(math.log(rest[0] / rest[1]) - math.log(rest[2] / rest[3]))
    if len(left) < MIN_PAIRS:
        return 0.0, 0
    mean = sum(left) / len(left)
    count = len(left)
    return (count - 1) / count * sum((v - mean) ** 2 for v in left), count - 1


def own_log_se(step: StepWork) -> float | None:
    """The standard error of a step's log capacity from its own blocks alone: what a paired
    comparison with another step priced at the same reference costs carries of it (the costs'
    noise, which `capacity_ratio(step, [])` adds, cancels between the two but for the
    difference of their shares, which the comparison itself holds). Without blocks, the
    cluster jackknife's, costs and all; None when neither can be told."""
    if step.blocks and not step.sets_costs:
        variance, freedom = _block_variance([step])
        return math.sqrt(variance) if freedom > 0 else None
    alone = capacity_ratio([step], [])
    return alone.log_se if alone is not None else None


def _shares(steps: Sequence[StepWork]) -> dict[str, float]:
    """Each turn id's share of the steps' credited work: how far their log capacity moves
    with that turn's reference cost (none for steps that set the costs: theirs cancels)."""
    works: dict[str, float] = {}
    for step in steps:
        if step.sets_costs:
            continue
        for turn, (work, _) in step.turns.items():
            works[turn] = works.get(turn, 0.0) + work
    total = sum(works.values())
    return {k: v / total for k, v in works.items()} if total > 0 else {}


def _cost_variance(top: Sequence[StepWork], bottom: Sequence[StepWork]) -> float:
    """How far the log of top's capacity over bottom's moves with the reference costs' noise:
    Σ (top's share − bottom's share)² × the cost's relative variance, over turn ids."""
    variances = {k: v for s in (*top, *bottom) for k, (_, v) in s.turns.items()}
    top_shares, bottom_shares = _shares(top), _shares(bottom)
    return sum(
        (top_shares.get(k, 0.0) - bottom_shares.get(k, 0.0)) ** 2 * v for k, v in variances.items()
    )


def _blocked_ratio(top: Sequence[StepWork], bottom: Sequence[StepWork]) -> Ratio | None:
    """`capacity_ratio` from blocks and the reference costs' variance (the module says why)."""
    high = pooled_capacity(top)
    low = pooled_capacity(bottom) if bottom else 1.0
    if high is None or low is None or high <= 0 or low <= 0:
        return None
    served = len({k for s in top for k, c in s.clusters.items() if c.work > 0})
    cost = _cost_variance(top, bottom)
    terms = [_block_variance(top), _block_variance(bottom) if bottom else (0.0, 0)]
    total = sum(v for v, _ in terms) + cost
    blocks_freedom = sum(f for _, f in terms)
    if blocks_freedom <= 0:
        return Ratio(high / low, None, served)
    # Welch–Satterthwaite, the costs' term counted as known; never more units than turns served
    freedom_share = sum(v * v / f for v, f in terms if f > 0)
    freedom = total * total / freedom_share if freedom_share > 0 else blocks_freedom
    return Ratio(high / low, math.sqrt(total), min(served, math.floor(freedom) + 1))


class Between(msgspec.Struct, frozen=True):
    """How far one run's capacity strays from run to run beyond its own noise, as the
    variance of its log (`variance`) with `freedom` degrees of freedom, read from repeated
    one-slot runs; and how many runs the one-slot bar pools (`pooled`)."""

    variance: float = 0.0
    freedom: int = 0
    pooled: int = 1


def between_runs(runs: Sequence[StepWork], pooled: int) -> Between:
    """The spread of repeated one-slot runs' log capacities (each priced at the same costs)
    less the spread each run's own blocks account for: what the machine did between runs —
    another process, a clock, a cache — that no run's own interval can see. Nothing without
    two runs with blocks, and nothing while the runs agree as well as their own noise lets
    them (their spread under the 90th percentile of what it would be without any: with two
    or three runs the estimate has one or two degrees of freedom, and adding it whenever it
    came out above zero by chance cost the simulated runner, which has no such spread, the
    knee in a fifth of its sweeps)."""
    measured = [r for r in runs if r.blocks]
    logs = [math.log(c) for r in measured if (c := r.capacity()) is not None and c > 0]
    if len(logs) < 2:
        return Between(pooled=pooled)
    freedom = len(logs) - 1
    mean = sum(logs) / len(logs)
    spread = sum((v - mean) ** 2 for v in logs) / freedom
    own = sum(_block_variance([r])[0] + _cost_variance([r], []) for r in measured) / len(measured)
    if spread <= own * _chi_square_90(freedom) / freedom:
        return Between(0.0, freedom, pooled)
    return Between(spread - own, freedom, pooled)


def _chi_square_90(freedom: int) -> float:
    """The 90th percentile of χ² with `freedom` degrees of freedom (Wilson–Hilferty: 2.64,
    4.56, 6.21 for 1, 2, 3 against 2.71, 4.61, 6.25 exact)."""
    third = 2.0 / (9.0 * freedom)
    return freedom * (1.0 - third + normal_quantile(0.9) * math.sqrt(third)) ** 3


def across_runs(ratio: Ratio, between: Between) -> Ratio:
    """`ratio` of a step over the pooled one-slot runs with the between-run variance of both:
    the step's own run and the bar's share of it (1 + 1/pooled runs). Its one or two degrees
    of freedom are paid in the variance rather than in the ratio's: scaled by the square of
    Student's t at its freedom over t at the ratio's (at 90%), so that read with the ratio's t
    each part is about as wide as its own t makes it — a step whose own blocks are known well
    keeps its interval, wider by what the runs' spread may be."""
    if ratio.log_se is None or between.variance <= 0 or between.freedom <= 0:
        return ratio
    added = between.variance * (1.0 + 1.0 / max(1, between.pooled))
    own_freedom = max(1, ratio.clusters - 1)
    if between.freedom < own_freedom:
        added *= (t_quantile(0.95, between.freedom) / t_quantile(0.95, own_freedom)) ** 2
    return Ratio(ratio.value, math.sqrt(ratio.log_se**2 + added), ratio.clusters)


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
