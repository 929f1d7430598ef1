"""When a steady-state step stops measuring (design §5): the rule a replay asks at every
segment boundary, which answers only at planned looks.

At least `min_step_seconds` of measurement window (half of it for an interleaved step, whose
pairs cancel the wander the minimum is for: `sequential.first_look`) and every corpus turn
once. The step is looked at at planned times (`statistics.sequential.look_times`: every
`min_step_seconds` up to `max_step_seconds`, doubling past a cap a latency bound lengthened),
each look at the
confidence its share of the error allows, never in between. A one-slot run stops at its first
look once its window holds enough distinct turns for clusters (its noise is carried by the
paired interval of every later step, so it needs no width of its own) — with `latency_factor`
set, at the first look after the one-slot runs before the steps also hold each turn often
enough to be the reference of its slowdowns (`reference_repeats`). Above one slot it is
measured on while, against a bar it is compared with, its gain interval reaches both sides of
`min_gain` and does not lie inside the indifference zone around it (between half of min_gain
and one and a half times it: a step shown to gain about min_gain but read below it stops
instead of running to the cap; one read above it is measured on until its interval clears
min_gain, as the knee rule asks), or while the p95 interval of a configured latency bound
reaches both sides of its limit. Why it stopped, whether it reached the cap, and the look it
stopped at go into the step's record (`measurement`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ....config import MAX_STEP_FACTOR
from ...judging.baseline import NO_GAIN_IN_REACH, turns_latency
from ...judging.interleaved import turns_at_full
from ...judging.latencies.latency_bounds import undecided_latency_bounds
from ...judging.metrics import (
    WANTED_WINDOW_TURNS,
    decisive_ends,
    decisive_estimate,
    ramp_up_end,
)
from ...judging.records import BlockRecord, TurnRecord
from ...judging.runs import RUNS, cluster_of, figure_of, replayed_runs
from ...judging.statistics.knee import short_of_min_gain
from ...judging.statistics.paired import StepWork, capacity_ratio, own_log_se
from ...judging.statistics.sequential import first_look, look_confidence, look_times
from ...judging.statistics.stats import (
    MIN_BATCHES,
    Estimate,
    log_interval,
    ratio_interval,
    t_quantile,
)
from ...judging.work import Pairing

if TYPE_CHECKING:
    from ....clock import Clock
    from ....interfaces.bounds import Bounds
    from ...corpus.corpus import Corpus
    from ...judging.baseline import Baseline


class StepContext(Protocol):
    """What the rule reads of a step's context (the step's own `StepContext` provides it)."""

    @property
    def clock(self) -> Clock: ...
    @property
    def corpus(self) -> Corpus: ...
    @property
    def bounds_now(self) -> Callable[[], Bounds]: ...
    @property
    def min_step_seconds(self) -> float: ...
    @property
    def max_step_seconds(self) -> float: ...
    @property
    def even_looks_seconds(self) -> float | None: ...
    @property
    def interleave_seconds(self) -> float | None: ...


# why a steady-state step stopped measuring
ENDED_DECIDED = "the interval decided"
ENDED_MINIMUM = "measured the minimum time"
ENDED_CAP = "inconclusive at max_step_seconds"
ENDED_BAR_CAP = "measured to max_step_seconds"
ENDED_LATENCY_CAP = "latency inconclusive at max_step_seconds"
ENDED_OUT_OF_REACH = NO_GAIN_IN_REACH
ENDED_ONE_PASS = "served the corpus once: no step's bar"
# with latency_factor set, how many requests of each turn the one-slot runs before the steps
# hold together (`reference_short`): a turn's slowdown is its mean at N over its mean at one
# slot, so the reference should be known no worse than the step's own side, and a step at two
# slots holds about seven a turn at its cap; a reference of two (one 4 s pass per run) carried
# most of each ratio's noise (`bench/latency_bounds.py`, docs/performance.md). A longer cap
# (`reference_repeats`) asks more of it, up to four times this.
REFERENCE_REPEATS = 8
MAX_REFERENCE_STRETCH = 4
# one-sided: the chance, at one look, that a step's true gain over the best step lies above
# the optimistic end its futility is judged from
OPTIMISTIC_QUANTILE = 1.2816  # the normal's 90th percentile


def reference_repeats(min_step_seconds: float, max_step_seconds: float) -> int:
    """How many requests of each turn the reference of `latency_factor` holds: eight where a
    step's cap is five minimums (the step's side holds about seven a turn there), more in
    proportion to a longer cap (a latency bound's derived one, `LATENCY_CAP_FACTOR`), up to four
    times that — the reference serves every step, so it is worth more than one step's side
    (32 a turn against 56 at two slots: a true 1.41× is held under a 1.5× limit in 96% of
    made-up sweeps, docs/performance.md)."""
    if min_step_seconds <= 0:
        return REFERENCE_REPEATS
    stretch = max_step_seconds / (MAX_STEP_FACTOR * min_step_seconds)
    return round(REFERENCE_REPEATS * min(MAX_REFERENCE_STRETCH, max(1.0, stretch)))


@dataclass(eq=False)
class SteadyStateRule:
    """The steady-state rule a replay asks at every segment boundary: measure on?"""

    ctx: StepContext
    slots: int
    compare_with: tuple[Estimate, ...]
    # the one-slot runs: the base of latency_factor
    latency_base: Baseline | None = None
    # what the step's work is paired with (None: counted turns, as evidence without a
    # steady one-slot run is judged)
    pairing: Pairing | None = None
    # for each bar, the steps' work the step is paired with (empty: two estimates)
    pair_with: tuple[tuple[StepWork, ...], ...] = ()
    # what the next step may gain over this one (`prediction.next_step_gain`): how
    # precisely this one must be known to be its bar (None: half of min_gain either side)
    next_gain: float | None = None
    # an interleaved step's blocks closed so far (None: the step does not interleave)
    blocks: Callable[[], tuple[BlockRecord, ...]] | None = None
    # a one-slot run that is no step's bar, because every step above one slot carries its own
    # one-slot blocks and prices its turns there: it gives the fidelity baseline, the memory
    # floor and the reference costs, and ends once it has served the corpus once (a
    # reference for latency_factor still holds it, `reference_short`, and then its first
    # look is at `min_step_seconds`). Such runs once made the sweep plan past a knee-1
    # runner's N=2 — judged across steps, not by its own blocks — and answer "too noisy" in
    # 21 of 30 wandering sweeps; held to its own blocks, none (docs/performance.md)
    no_bar: bool = False
    why: str = field(default=ENDED_MINIMUM, init=False)
    reached_cap: bool = field(default=False, init=False)
    planned: list[float] = field(init=False)
    look: int = field(default=0, init=False)  # the last planned look taken (1-based; 0: none yet)

    def __post_init__(self) -> None:
        ctx = self.ctx
        self.planned = look_times(
            ctx.min_step_seconds,
            ctx.max_step_seconds,
            ctx.even_looks_seconds,
            first_look(
                ctx.min_step_seconds,
                ctx.interleave_seconds if self.blocks is not None and self.slots > 1 else None,
            ),
        )
        if self.no_bar and self.slots <= 1:
            self.planned[0] = self.ctx.min_step_seconds

    @property
    def looks(self) -> int:
        return len(self.planned)

    def __call__(self, turns: list[TurnRecord]) -> bool:
        start = self._start(turns)
        if start is None:
            return True  # not every worker has started (no block has closed): no window yet
        now = self.ctx.clock.monotonic()
        measured = now - start
        if self.no_bar and self.slots <= 1 and self._served_once(turns, start, now):
            self.why = ENDED_ONE_PASS
            return False
        if measured < self.planned[0]:
            return True  # the minimum (an interleaved step's first look: `first_look`)
        if measured >= self.ctx.max_step_seconds:
            self.reached_cap = True
            self.look = self.looks
            if self.slots <= 1:
                self.why = ENDED_BAR_CAP
            elif self.compare_with and self.undecided(turns, start, now):
                self.why = ENDED_CAP
            elif self.latency_undecided(turns, start, now):
                self.why = ENDED_LATENCY_CAP
            else:
                self.why = ENDED_DECIDED if self.compare_with else ENDED_MINIMUM
            return False
        if self.look >= self.looks - 1 or measured < self.planned[self.look]:
            return True  # between planned looks (the last one is the cap)
        while self.look < self.looks - 1 and measured >= self.planned[self.look]:
            self.look += 1  # a look passed while a long segment ran is spent unused
        if not self.enough_turns(turns, start, now):
            return True
        if self.slots <= 1:
            if self.reference_short(turns, start, now):
                return True
            self.why = ENDED_DECIDED if self.look > 1 else ENDED_MINIMUM
            return False
        if self.latency_undecided(turns, start, now):
            return True
        if not self.compare_with:
            self.why = ENDED_MINIMUM
            return False
        if self.out_of_reach(turns, start, now):
            self.why = ENDED_OUT_OF_REACH
            return False
        if self.undecided(turns, start, now):
            return True
        if self.leads(turns, start, now) and self.too_wide_for_a_bar(turns, start, now):
            return True
        self.why = ENDED_DECIDED
        return False

    def _served_once(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """A one-slot run that is no bar has what it is for: the corpus served (the step asks
        only once every corpus turn was), clusters enough, and the reference held."""
        return self.enough_turns(turns, start, now) and not self.reference_short(turns, start, now)

    def _start(self, turns: list[TurnRecord]) -> float | None:
        """Where the window starts: when the last worker started, or the first block."""
        if self.blocks is None:
            return ramp_up_end(turns, self.slots)
        closed = self.blocks()
        return closed[0].start if closed else None

    def _work(self, turns: list[TurnRecord], start: float, now: float) -> StepWork:
        """The step's work so far as the judge will read it (its closed blocks' pairs where it
        interleaves)."""
        assert self.pairing is not None
        blocks = self.blocks() if self.blocks is not None else ()
        return self.pairing.step_work(turns, self.slots, (start, now), blocks)[0]

    def _over(
        self,
        place: int,
        bar: Estimate,
        here: Estimate,
        turns: list[TurnRecord],
        window: tuple[float, float],
        confidence: float,
    ) -> tuple[float, float] | None:
        """The step's interval over bar `place`: paired by cluster with the bar's steps where
        they are known (the reference costs' noise cancels), else as two estimates."""
        paired = self.pair_with[place] if place < len(self.pair_with) else ()
        if not paired or self.pairing is None:
            return ratio_interval(here, bar, confidence)
        work = self._work(turns, *window)
        if work.reference and all(w.slots <= 1 for w in paired):
            ratio = self.pairing.gain(work)  # over its own one-slot blocks, as judged
        else:
            ratio = capacity_ratio([work], paired)
        if ratio is None:
            return None
        return log_interval(ratio.value, ratio.log_se, ratio.clusters, confidence)

    def out_of_reach(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """Measuring to the cap could not show the step climbing over the best step before it
        (futility): even the optimistic end of its gain over that step (the point moved up by
        1.28 standard errors) would, with the noise left at the cap — the bar's own, which no
        longer shrinks, and the step's, shrinking with its window — have its interval's low end
        below 1 + min_gain. Such a step never climbs, so it is never the answer and counts
        toward patience as a step measured to its cap does; the rest of its cap is saved.
        Paired steps whose best step before them has more than one slot only: a step's gain
        over one slot is its verdict, and is measured as it was."""
        place = len(self.compare_with) - 1
        paired = self.pair_with[place] if 0 < place < len(self.pair_with) else ()
        if not paired or self.pairing is None or all(w.slots <= 1 for w in paired):
            # over one slot the step's own gain is the decision: measured as before
            return False
        work = self._work(turns, start, now)
        over = capacity_ratio([work], paired)
        own = own_log_se(work)
        if over is None or over.log_se is None or over.clusters < MIN_BATCHES or own is None:
            return False
        bounds = self.ctx.bounds_now()
        share = min(1.0, (now - start) / self.ctx.max_step_seconds)
        # the comparison's noise with the step's own part shrunk to what its cap would leave;
        # the bar's part and the reference costs' (only the difference of the two steps'
        # shares: the rest cancels) stay as they are
        left = math.sqrt(max(0.0, over.log_se**2 - own**2 * (1.0 - share)))
        at_cap = look_confidence(bounds.confidence, self.looks, self.looks)
        quantile = t_quantile(0.5 + at_cap / 2.0, over.clusters - 1)
        optimistic = math.log(over.value) + OPTIMISTIC_QUANTILE * over.log_se
        return optimistic - quantile * left < math.log1p(bounds.min_gain)

    def leads(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """It serves more than the best step before it: the next step is held to it, with its
        noise, so it is measured on as a bar (a bar known to ±20% lets no later step decide)."""
        here = self._estimate(turns, start, now)
        best = max((bar.value for bar in self.compare_with), default=0.0)
        return here is not None and here.value > best

    def too_wide_for_a_bar(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """The step's own interval, at the confidence asked, is wider either side than
        `bar_precision`. How well a bar is known is no decision, so no look spends error on it
        (at an early look's share it would hold the leader to about ±3%, most of its cap)."""
        bounds = self.ctx.bounds_now()
        confidence = bounds.confidence
        wanted = self.bar_precision(bounds.min_gain)
        if self.pairing is not None:
            # paired, a later step is compared with this one's own work: the reference costs'
            # noise cancels, so only the step's own spread matters
            work = self._work(turns, start, now)
            own = capacity_ratio([work], [])
            own_se = own_log_se(work)
            if own is None or own_se is None or own.clusters < MIN_BATCHES:
                return True
            half = t_quantile(0.5 + confidence / 2.0, own.clusters - 1) * own_se
            return math.expm1(half) > wanted
        here = self._estimate(turns, start, now)
        if here is None or here.value <= 0 or not here.has_interval:
            return True
        low, high = ratio_interval(here, Estimate(here.value), confidence) or (0.0, 0.0)
        return (high - low) / 2.0 > wanted

    def bar_precision(self, min_gain: float) -> float:
        """How precisely a step must be known to be the next step's bar: half the distance
        between what the next step may gain over it (`next_gain`) and 1 + min_gain, the next
        step's own noise taking the other half — never finer than half of min_gain, never
        coarser than min_gain (its own gain over one slot is read with the drift the closing
        run adds, which a bar known to ±16% did not survive on a busy machine). A next step
        that may gain +30% is decided against a bar known to ±8.7%; one the model expects to
        gain about min_gain needs the bar to ±5%."""
        if self.next_gain is None or self.next_gain <= 0:
            return min_gain / 2.0
        distance = abs(math.log(self.next_gain / (1.0 + min_gain)))
        return min(min_gain, max(min_gain / 2.0, math.expm1(distance / 2.0)))

    def enough_turns(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """Enough distinct turns (or runs) served in the window for clusters — paired, or at
        one slot, whose turns become the reference costs; else ten batches' worth of turns."""
        if self.pairing is None and self.slots > 1:
            return len(self._ends(turns, start, now)) >= WANTED_WINDOW_TURNS
        shape = self.ctx.corpus.shape
        served = {
            cluster_of(t, shape) for t in turns if t.result.served and start < t.result.ended <= now
        }
        return len(served) >= MIN_BATCHES

    def reference_short(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """With `latency_factor` set, a one-slot run is the reference each later step's turns
        (runs, for a corpus of whole runs) are held against one by one: it is measured on
        while the one-slot runs so far hold one of them fewer than `reference_repeats` times
        and this run fewer than half of that. The two runs before the steps share the
        repeats; a closing run, once they are complete, stops at its first look. What the
        judge pairs counts: served turns started in the window, completed runs ended in it."""
        if self.ctx.bounds_now().latency_factor is None:
            return False
        base = self.latency_base.paired if self.latency_base else None
        if figure_of(self.ctx.corpus.shape) == RUNS:
            earlier = base.runs if base else {}
            runs = replayed_runs(turns)
            own = Counter(r.segment_id for r in runs if r.served and start < r.ended <= now)
        else:
            earlier = base.turns if base else {}
            own = Counter(
                t.turn_id for t in turns if t.result.served and start <= t.result.started <= now
            )
        wanted = set(own) | set(earlier)
        fewest_in_all = min((own[k] + len(earlier.get(k, ())) for k in wanted), default=0)
        fewest_here = min((own[k] for k in wanted), default=0)
        repeats = reference_repeats(self.ctx.min_step_seconds, self.ctx.max_step_seconds)
        return fewest_in_all < repeats and 2 * fewest_here < repeats

    def latency_undecided(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """A configured latency bound's p95 interval, at this look's confidence (as the judge
        will read it), still reaches both sides of its limit."""
        bounds = self.ctx.bounds_now()
        if self.slots <= 1 or not bounds.latency_bounds:
            return False
        base = self.latency_base
        paired = base.paired if base else None
        blocks = self.blocks() if self.blocks is not None else ()
        at_full = turns_at_full(turns, blocks, self.slots)
        figures = turns_latency(at_full, self.ctx.corpus.shape, (start, now), base=paired)
        one_slot = base.figures.best_one_slot_latency if base else None
        look = (self.look, self.looks)
        return bool(undecided_latency_bounds(figures, one_slot, bounds, look))

    def _ends(self, turns: list[TurnRecord], start: float, now: float) -> list[float]:
        """Served turns, or completed runs for a corpus of whole runs: what is decided on."""
        return decisive_ends(turns, start, now, self.ctx.corpus.shape)

    def _estimate(self, turns: list[TurnRecord], start: float, now: float) -> Estimate | None:
        """The deciding figure so far as the verdict will read it: paired capacity as turns or
        runs per hour with the paired gain's noise; counted turns without a pairing."""
        if self.pairing is None:
            return decisive_estimate(turns, self.slots, self.ctx.corpus.shape, start, now)
        pairing = self.pairing
        work = self._work(turns, start, now)
        capacity, gain = work.capacity(), pairing.gain(work)
        if capacity is None or gain is None or gain.log_se is None:
            return None
        rate = pairing.rate_of(capacity)
        return Estimate(rate, rate * gain.log_se, gain.clusters)

    def undecided(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """Against some bar, the gain interval at this look's confidence is undecided
        (`gain_undecided`)."""
        bounds = self.ctx.bounds_now()
        here = self._estimate(turns, start, now)
        if here is None or not here.has_interval:
            return True  # too few clusters: the verdict would read the step as a point
        confidence = look_confidence(bounds.confidence, self.look, self.looks)
        return any(
            gain_undecided(
                self._over(place, bar, here, turns, (start, now), confidence), bounds.min_gain
            )
            for place, bar in enumerate(self.compare_with)
        )


def gain_undecided(ratio: tuple[float, float] | None, min_gain: float) -> bool:
    """The interval of a step's gain over a bar reaches both sides of 1 + `min_gain`, and the
    step is not a marginal one that looks short of it (`short_of_min_gain`). There a step
    whose point is below min_gain stops — measuring on would only tell which side of a gain
    that is not worth its slots — while one whose point clears it is measured on, to show it
    or reach the cap: the knee rule pays only for a gain the interval shows."""
    if ratio is None:
        return False
    low, high = ratio
    wanted = 1.0 + min_gain
    return low < wanted <= high and not short_of_min_gain(ratio, min_gain)
