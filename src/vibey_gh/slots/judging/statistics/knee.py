"""The ideal N is the knee (design §5): the last slot count whose step still paid for itself.

More slots cost memory, latency and fidelity, so a step must add `min_gain` to count. Past the
knee, throughput often still creeps up a few percent per slot (work outside the model's
capacity overlaps across workers), and long steady steps measure that creep precisely — a rule
that takes "the smallest N the evidence cannot tell from the best" walks onto the plateau.
So each step is held to the best step measured before it, as the patience rule holds it:

- a step *climbs* when it qualifies and the interval of its throughput over the best step
  before it lies at or above 1 + min_gain — the gain that resets the patience count — and no
  earlier step is shown, paired with it, to serve within min_gain of it;
- a step *adds less than min_gain* when that interval lies below it — patience's "no gain"
  (`gain_against` reads both, for the sweep too);
- the ideal N is the last step that climbs (never one with more slots than the best qualifying
  step); with none, one.

Both tests carry both steps' noise: the earlier step was measured too, and a best step read
as a point lets a step climb over an unlucky low reading of it (N=2 read low, N=3 read high,
although N=3 adds 3%). The best step before is the one with the highest throughput among those
inside every bound *with an interval* that surely serves most (the low end of its interval):
a step too short for an interval says nothing of its throughput, and a lucky point — or a
noisy step whose point was lucky — would block every later gain or hold it undecided.

A gain too small to count, or one the interval cannot show, is never paid for: what patience
stopped on never becomes the answer, and neither does a step that only might have gained. The
answer only moves down as min_gain grows (fewer steps climb). Nothing here knows which figure
decides (turns/h, runs/h, paired capacity): it reads throughput estimates with their noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from .stats import MIN_BATCHES, Estimate, log_interval, ratio_interval


class Rate(msgspec.Struct, frozen=True):
    """One step's deciding throughput, as the knee rule reads it.

    index: the step's place in the sweep (measurement order); slots: its N.
    throughput: the figure with its noise. qualifies: inside every bound and a `min_gain` gain
    over one slot (judged by the caller). counts: inside every bound, so its throughput is one
    the device could run with and a later step must beat it. too_short: a steady-state step
    whose window held too few turns for an interval: nothing can be said about its gain.
    """

    index: int
    slots: int
    throughput: Estimate
    qualifies: bool
    counts: bool = True
    too_short: bool = False
    # (index, standard error of the log) of its throughput over each earlier step's, paired
    # by cluster where the sweep could pair them (`StepMetrics.over_earlier`)
    paired: tuple[tuple[int, float], ...] = ()
    # an interleaved step's gain over one slot from its own one-slot blocks (value; se of its
    # log; batches: its pairs): what it is judged on against any one-slot bar, as its verdict
    # and the step's own stopping rule judge it (`judging.interleaved`)
    own_gain: Estimate | None = None

    def paired_over(self, earlier: Rate) -> float | None:
        return dict(self.paired).get(earlier.index)


def over_best(
    step: Estimate, best_before: Estimate, confidence: float, paired_se: float | None = None
) -> tuple[float, float] | None:
    """Interval of a step's throughput over the best step before it, with both steps' noise:
    paired by cluster where `paired_se` (of the log ratio) is known, else as two independent
    estimates. None when the best step served nothing."""
    if best_before.value <= 0:
        return None
    if paired_se is not None and step.batches >= MIN_BATCHES:
        return log_interval(step.value / best_before.value, paired_se, step.batches, confidence)
    return ratio_interval(step, best_before, confidence)


def rate_over(rate: Rate, bar: Rate, confidence: float) -> tuple[float, float] | None:
    """Interval of a step's throughput over a bar step's: over a one-slot bar, an interleaved
    step's own gain (its N blocks over its own one-slot blocks, as its verdict reads it: a
    one-slot run of the sweep is no reference of it, and read against one its ratio moved by
    how far that run strayed from the others); else `over_best`."""
    own = _own_over(rate, bar)
    if own is not None:
        return log_interval(own.value, own.se, own.batches, confidence) if own.value > 0 else None
    return over_best(rate.throughput, bar.throughput, confidence, rate.paired_over(bar))


def point_over(rate: Rate, bar: Rate) -> float:
    """A step's throughput over a bar step's, as a point (`rate_over`); 0 over nothing."""
    own = _own_over(rate, bar)
    if own is not None:
        return own.value
    return rate.throughput.value / bar.throughput.value if bar.throughput.value > 0 else 0.0


def _own_over(rate: Rate, bar: Rate) -> Estimate | None:
    """The step's own gain where it is what the step is held to against `bar`: an interleaved
    step's, over a one-slot bar; None otherwise."""
    return rate.own_gain if bar.slots <= 1 else None


# How a step reads against the best step before it (`gain_against`).
CLIMBS = "climbs"  # the whole interval is at or above 1 + min_gain: resets the patience count
ADDS_LESS = "adds less"  # the whole interval is below 1 + min_gain: patience's "no gain"
UNDECIDED = "undecided"  # the interval straddles 1 + min_gain, or there is none


def gain_against(
    step: Estimate,
    best_before: Estimate,
    min_gain: float,
    confidence: float,
    paired_se: float | None = None,
) -> str:
    """Whether the interval of the step over `best_before` shows a `min_gain` gain (CLIMBS),
    shows less (ADDS_LESS), or neither (UNDECIDED). One interval decides both, so a step that
    adds less than min_gain never climbs and what patience stops on is never the answer. With
    nothing served before, any step climbs."""
    if best_before.value <= 0:
        return CLIMBS
    return _reads(over_best(step, best_before, confidence, paired_se), min_gain)


def short_of_min_gain(ratio: tuple[float, float] | None, min_gain: float) -> bool:
    """A marginal step that looks short of `min_gain`: its whole interval inside the
    indifference zone (half of min_gain to one and a half times it) and its point below
    min_gain. Its step stops there (`stepping.stopping`), and the sweep counts it toward
    patience as a step measured to its cap: longer would only tell which side of a gain not
    worth its slots it lies."""
    if ratio is None:
        return False
    low, high = ratio
    return (
        1.0 + min_gain / 2.0 <= low
        and high < 1.0 + 1.5 * min_gain
        and math.sqrt(low * high) < 1.0 + min_gain
    )


def rate_against(rate: Rate, bar: Rate, min_gain: float, confidence: float) -> str:
    """`gain_against` for two steps of a sweep, read through `rate_over`."""
    if bar.throughput.value <= 0:
        return CLIMBS
    return _reads(rate_over(rate, bar, confidence), min_gain)


def _reads(ratio: tuple[float, float] | None, min_gain: float) -> str:
    if ratio is not None and ratio[0] >= 1.0 + min_gain:
        return CLIMBS
    if ratio is not None and ratio[1] < 1.0 + min_gain:
        return ADDS_LESS
    return UNDECIDED


class PastKnee(msgspec.Struct, frozen=True):
    """A step above the knee and what it adds: `adds` is its throughput over the best measured
    before it, minus 1; `below_min_gain`: its whole interval is below `min_gain` over that."""

    index: int
    slots: int
    adds: float
    below_min_gain: bool


class Knee(msgspec.Struct, frozen=True):
    """The rule's answer: `chosen` (the knee), the qualifying steps that `climbed`, and the
    steps inside every bound `past` the knee (more slots than it)."""

    chosen: Rate
    climbed: tuple[Rate, ...]
    past: tuple[PastKnee, ...]


def sets_the_bar(rate: Rate) -> bool:
    """A step later steps are held to: inside every bound, and not too short for an interval
    (a point without its noise is as likely the luckiest reading as the truest)."""
    return rate.counts and not rate.too_short


def surely_serves(rate: Rate, confidence: float) -> float:
    """What a step surely serves: the low end of its throughput interval (its point without
    one). The best step is the one that surely serves most, so a noisy step whose point was
    lucky does not become the bar every later step is held to with its wide noise."""
    low = ratio_interval(rate.throughput, Estimate(1.0), confidence)
    return low[0] if low is not None else rate.throughput.value


def best_of(rates: Sequence[Rate], confidence: float) -> Rate | None:
    """The best step among `rates` that set the bar (`sets_the_bar`, `surely_serves`) — unless
    a step paired with it is shown to serve more, then the best of those, and so on. Each
    step's interval over one slot holds how far one slot's runs strayed from each other, one
    slot's own does not: where its runs disagreed (a load spike in one), one slot surely
    served most by that reading, although every larger step, paired with it, served more."""
    candidates = [r for r in rates if sets_the_bar(r)]

    def rank(rate: Rate) -> tuple[float, int]:
        return surely_serves(rate, confidence), -rate.index

    best = max(candidates, key=rank, default=None)
    while best is not None:
        bar = best
        above = [r for r in candidates if _shown_above(r, bar, confidence)]
        # each move is to a higher point, so this ends
        best = max(above, key=rank, default=None)
    return bar if candidates else None


def _shown_above(rate: Rate, other: Rate, confidence: float) -> bool:
    """`rate` paired with `other` (either measured first) is shown to serve more than it."""
    if rate.index > other.index and _paired(rate, other):
        ratio = rate_over(rate, other, confidence)
        return ratio is not None and ratio[0] > 1.0
    if other.index > rate.index and _paired(other, rate):
        ratio = rate_over(other, rate, confidence)
        return ratio is not None and ratio[1] < 1.0
    return False


def _paired(later: Rate, earlier: Rate) -> bool:
    """The later step's throughput over the earlier one's is known paired: by cluster, or as
    an interleaved step's own gain over a one-slot step."""
    return _own_over(later, earlier) is not None or later.paired_over(earlier) is not None


def _best_before(rates: Sequence[Rate], confidence: float) -> dict[int, Rate | None]:
    """Each step's best step measured before it."""
    ordered = sorted(rates, key=lambda r: r.index)
    return {rate.index: best_of(ordered[:place], confidence) for place, rate in enumerate(ordered)}


def _shown_no_better(rate: Rate, rates: Sequence[Rate], min_gain: float, confidence: float) -> bool:
    """Some earlier step that sets the bar is shown, paired where the sweep could pair them,
    to serve within `min_gain` of this one (or more). The bar is the step that *surely* serves
    most, read with each step's noise over one slot — where one slot's runs disagreed, that
    noise is wide for every larger step, and one slot, read narrowly, stayed the bar: a step
    past the knee then climbed over one slot although it was shown, paired with the steps
    before it, to add nothing over them."""
    return any(
        rate_against(rate, e, min_gain, confidence) == ADDS_LESS
        for e in rates
        if e.index < rate.index and sets_the_bar(e)
    )


def knee(rates: Sequence[Rate], min_gain: float, confidence: float) -> Knee | None:
    """The knee among `rates` (every step of the sweep, one-slot runs included, so that each
    step is held to the best measured before it); None when no step climbs."""
    qualifying = [r for r in rates if r.qualifies and not r.too_short]
    if not qualifying:
        return None
    before = _best_before(rates, confidence)
    # more slots than the best qualifying step never pay: they serve less
    top = max(qualifying, key=lambda r: (r.throughput.value, -r.slots)).slots
    climbed = tuple(
        r
        for r in qualifying
        if r.slots <= top
        and (
            (prior := before[r.index]) is None
            or rate_against(r, prior, min_gain, confidence) == CLIMBS
        )
        and not _shown_no_better(r, rates, min_gain, confidence)
    )
    if not climbed:
        return None
    chosen = max(climbed, key=lambda r: (r.slots, -r.index))
    past = []
    for rate in sorted(rates, key=lambda r: r.index):
        prior = before[rate.index]
        if not rate.counts or rate.slots <= chosen.slots or prior is None:
            continue
        adds = point_over(rate, prior) - 1.0 if prior.throughput.value > 0 else 0.0
        below = not rate.too_short and rate_against(rate, prior, min_gain, confidence) == ADDS_LESS
        past.append(PastKnee(rate.index, rate.slots, adds, below))
    return Knee(chosen, climbed, tuple(past))


def plateau_sentence(found: Knee, min_gain: float, figure: str = "turns/h") -> str:
    """'N=5 and 6 add +5.4% and +2.5% more turns/h: below min_gain (10%)' — what the steps
    past the knee add, each over the best before it; '' when nothing was measured past it."""
    if not found.past:
        return ""
    names = _join([str(p.slots) for p in found.past])
    adds = _join([f"{p.adds:+.1%}" for p in found.past])
    one = len(found.past) == 1
    verb, each = ("adds", "") if one else ("add", "each ")
    if all(p.below_min_gain for p in found.past):
        why = f"below min_gain ({min_gain:.0%})"
    else:
        why = f"{'not' if one else 'none'} shown to add min_gain ({min_gain:.0%})"
    if any(p.adds < 0 for p in found.past):  # "add -1.4% more" would say the opposite
        verb = "changes" if one else "change"
        return f"N={names} {verb} {figure} by {adds}, {each}over the best step before it: {why}"
    return f"N={names} {verb} {adds} more {figure}, {each}over the best step before it: {why}"


def knee_paragraph(found: Knee, min_gain: float, figure: str = "turns/h") -> str:
    """The rule in one paragraph, with this sweep's knee as its example."""
    text = (
        f"The ideal N is the knee, N={found.chosen.slots}: the last step whose whole {figure} "
        f"interval cleared a {min_gain:.0%} gain over the best step before it. More slots "
        "cost memory, latency and fidelity, so a step that adds "
        "less than min_gain — what the patience rule calls no gain — or whose gain the "
        "interval cannot show is not paid for, however precisely it was measured."
    )
    plateau = plateau_sentence(found, min_gain, figure)
    return text + (f" Past the knee, {plateau}." if plateau else "")


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
