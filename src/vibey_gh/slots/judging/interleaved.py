"""Interleaved steps: a step that carries its own one-slot reference.

A sweep measures each N in its own minutes, so a gain compares two stretches of the machine,
and a machine's level wanders: on two quiet cores the embedded runner's one-slot capacity moved
5–10% from one minute to the next, whichever process served it, while its own blocks of a
minute agreed within ±2% (`bench/interleaved_blocks.py`, docs/performance.md). Read across
runs, that wander is the larger part of a gain's error, and the one-slot runs that measure it
give it one or two degrees of freedom.

So an interleaved step starts its runner with N slots and serves it in blocks, one turn at a
time and N at a time, in the order 1, N, N, 1 repeated (`stepping.block_gate`). Each pair of
neighbouring blocks — (1, N), (N, 1), (1, N), … — reads the gain of N over one slot at one
moment of the machine: the N block's capacity over the one-slot block's, each the credited
reference work of the turns sent in it over their worker time (`work.step_work`, with the
block as its window). A level that moves steadily over a quad raises the (1, N) pair's gain as
much as it lowers the (N, 1) pair's, so it cancels in their mean, and the pairs' spread carries
what is left of it: the gain's error is the spread of its pairs, with as many degrees of
freedom as pairs less one — a step's own, not its neighbours'.

The step's work is then its N blocks' credit scaled by the one-slot level of the pooled
one-slot runs over its own one-slot blocks' pooled level (the work the N blocks would have
been credited at the level the sweep's one-slot bar was measured at): a ratio of sums. Read
pair by pair and averaged, a one-slot block of two turns read its level roughly, and the
inverse of a rough level leans up: +1 to +5% on the simulated sweeps with no gain from N. Its
noise is read by leaving out one pair at a time, both its blocks (`statistics.paired`): its
capacity over the pooled runs' is its gain, its capacity over another interleaved step's the
ratio of their gains, each with its own pairs' noise.
The between-run spread of the one-slot runs is no longer added: the step holds its own.

Pure functions of recorded turns and blocks; `work.Pairing` decides which steps are read so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from .records import BlockRecord, StepRecord, TurnRecord
from .runs import cluster_of
from .statistics.paired import ClusterWork, Ratio, StepWork, own_log_se, pooled_capacity

# a served turn's reference seconds, and whether the cost model priced it
# (`work.ReferenceCosts.cost_of`)
Price = Callable[[TurnRecord], tuple[float, bool]]


def block_seconds_of(step: StepRecord) -> float | None:
    """How long the step's blocks were asked to be; None where it did not interleave."""
    if not step.blocks:
        return None
    asked = (step.measurement or {}).get("block_seconds")
    if isinstance(asked, int | float) and not isinstance(asked, bool) and asked > 0:
        return float(asked)
    return max(b.stop - b.start for b in step.blocks) or None


def turns_at_full(
    turns: Sequence[TurnRecord], blocks: Sequence[BlockRecord], slots: int
) -> list[TurnRecord]:
    """The turns sent in the step's blocks of all its slots: what its latency is read from
    (every turn where the step did not interleave)."""
    if not blocks:
        return list(turns)
    full = {i for i, b in enumerate(blocks) if b.at_once >= slots}
    return [t for t in turns if t.block in full]


def block_pairs(blocks: Sequence[BlockRecord], until: float | None = None) -> list[tuple[int, int]]:
    """The (one-slot block, N block) indices of each pair of neighbouring blocks — blocks 0
    and 1, 2 and 3, … : (1, N), (N, 1), (1, N), … — whose both blocks closed by `until`
    (None: all)."""
    closed = [b for b in blocks if until is None or b.stop <= until]
    pairs = []
    for first in range(0, len(closed) - 1, 2):
        if any(b.stop <= b.start for b in closed[first : first + 2]):
            continue  # a block of no time (a file edited by hand) reads nothing
        one, many = sorted((first, first + 1), key=lambda index: closed[index].at_once)
        if closed[one].at_once < closed[many].at_once:
            pairs.append((one, many))
    return pairs


def own_prices(
    turns: Sequence[TurnRecord],
    blocks: Sequence[BlockRecord],
    samples: Mapping[str, Sequence[float]],
    price: Price,
    until: float | None = None,
) -> Price:
    """Prices from the step's own one-slot blocks, where a turn is served alone in the runner
    its N blocks share, minutes or seconds from them: each turn's mean over those times and the
    one-slot runs' `samples` scaled to the blocks' level (on two cores a lone turn in the
    two-slot runner ran up to 20% faster than in the one-slot runner minutes before, and the
    runs may hold a turn twice); a turn never served in either, `price` scaled alike."""
    own: dict[str, list[float]] = defaultdict(list)
    for turn in turns:
        result = turn.result
        if not (0 <= turn.block < len(blocks)) or blocks[turn.block].at_once != 1:
            continue
        if (
            result.served
            and result.ended > result.started
            and (until is None or result.ended <= until)
        ):
            own[turn.turn_id].append(result.ended - result.started)
    shared = [k for k in own if samples.get(k)]
    here = sum(sum(own[k]) / len(own[k]) for k in shared)
    there = sum(sum(samples[k]) / len(samples[k]) for k in shared)
    scale = here / there if here > 0 and there > 0 else 1.0
    pooled = {
        k: (sum(own.get(k, ())) + scale * sum(samples.get(k, ())))
        / (len(own.get(k, ())) + len(samples.get(k, ())))
        for k in set(own) | set(samples)
        if own.get(k) or samples.get(k)
    }

    def priced(turn: TurnRecord) -> tuple[float, bool]:
        if turn.turn_id in pooled:
            return pooled[turn.turn_id], False
        cost, by_model = price(turn)
        return cost * scale, by_model

    return priced


def interleaved_work(
    turns: Sequence[TurnRecord],
    slots: int,
    shape: str,
    blocks: Sequence[BlockRecord],
    price: Price,
    level: float,
    until: float | None = None,
) -> tuple[StepWork, frozenset[str]]:
    """The step's work as the module reads it: its N blocks' credited work scaled by the
    one-slot `level` (the pooled runs' capacity) over its one-slot blocks' pooled capacity —
    a ratio of sums, not a mean of each pair's ratios, whose few-turn one-slot blocks would
    lean it up — with each pair's blocks beside each other for the estimator; and the turn
    ids the cost model priced. Pairs whose one-slot block did no work are left out."""
    served = [t for t in turns if t.result.served and t.result.ended > t.result.started]
    pairs: list[tuple[ClusterWork, ClusterWork, dict[str, float]]] = []
    modelled: set[str] = set()
    for one, many in block_pairs(blocks, until):
        reference, priced_one = _credited(served, blocks[one], shape, price)
        work, priced = _credited(served, blocks[many], shape, price)
        alone, done = sum(reference.values()), sum(work.values())
        if alone <= 0 or done <= 0:
            continue
        modelled |= priced | priced_one
        length = blocks[many].stop - blocks[many].start
        pairs.append(
            (
                ClusterWork(alone, blocks[one].stop - blocks[one].start),
                ClusterWork(done, length * slots),  # every slot's time
                work,
            )
        )
    one_level = sum(p[0].work for p in pairs) / sum(p[0].time for p in pairs) if pairs else 0.0
    scale = level / one_level if one_level > 0 else 0.0
    clusters: dict[str, tuple[float, float]] = {}
    for _, served_block, work in pairs:
        for key, credit in work.items():
            so_far = clusters.get(key, (0.0, 0.0))
            share = served_block.time * credit / served_block.work
            clusters[key] = (so_far[0] + credit * scale, so_far[1] + share)
    return (
        StepWork(
            slots,
            {k: ClusterWork(w, t) for k, (w, t) in clusters.items()},
            tuple(ClusterWork(p[1].work * scale, p[1].time) for p in pairs),
            reference=tuple(p[0] for p in pairs),
        ),
        frozenset(modelled),
    )


def _credited(
    served: Sequence[TurnRecord], block: BlockRecord, shape: str, price: Price
) -> tuple[dict[str, float], set[str]]:
    """Each cluster's reference work done inside the block, whichever block its turns were
    sent in: a turn's reference cost times the share of its service inside the block. At N
    slots on a CPU one turn may wait out another's prefill and then run at full speed, so a
    block is read as the work every turn in it did in its wall time, never as the rate of
    the turns sent in it (a waiting turn sent in one block and a fast one in the next read
    as a low block and a high one); and the turns the cost model priced."""
    work: dict[str, float] = defaultdict(float)
    priced: set[str] = set()
    for turn in served:
        started, ended = turn.result.started, turn.result.ended
        inside = min(ended, block.stop) - max(started, block.start)
        if inside <= 0:
            continue
        cost, by_model = price(turn)
        if by_model:
            priced.add(turn.turn_id)
        work[cluster_of(turn, shape)] += cost * inside / (ended - started)
    return work, priced


def interleaved_gain(work: StepWork, level: float) -> Ratio | None:
    """An interleaved step's gain over one slot: its capacity, scaled to the pooled one-slot
    runs' `level`, over that level — its N blocks over its own one-slot blocks — with the noise
    of its own pairs alone, against any one-slot bar. The level is one number that cancels;
    read against one run as a bar (the best step so far may be one), that run's own blocks
    would add their noise and their few degrees of freedom: beside one-pass runs a step then
    had no interval at any look and ran to its cap. None without work or level."""
    capacity = pooled_capacity([work])
    if capacity is None or capacity <= 0 or level <= 0:
        return None
    return Ratio(capacity / level, own_log_se(work), len(work.reference))
