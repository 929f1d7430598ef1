"""When a steady-state step stops measuring (design §5): the rule a replay asks at every
segment boundary.

At least `min_step_seconds` of measurement window and every corpus turn once; above one slot,
longer (up to `max_step_seconds`) while the throughput interval cannot yet tell whether the
step clears `min_gain` over the bars it is compared with, or while the p95 interval of a
configured latency bound reaches both sides of its limit. A one-slot run is measured until its
own interval is narrow enough to be a bar, and so is a step that serves more than the best
before it once its gain is decided: the next step is held to its throughput as a point. Why
it stopped, and whether it reached the cap, go into the step's record (`measurement`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ...judging.baseline import turns_latency
from ...judging.latencies.latency_bounds import undecided_latency_bounds
from ...judging.metrics import (
    WANTED_WINDOW_TURNS,
    decisive_ends,
    decisive_estimate,
    ramp_up_end,
)
from ...judging.records import TurnRecord
from ...judging.statistics.stats import Estimate, ratio_interval

if TYPE_CHECKING:
    from ....clock import Clock
    from ...corpus.corpus import Corpus
    from ...judging.baseline import Baseline
    from ...judging.bounds import Bounds


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


# why a steady-state step stopped measuring
ENDED_DECIDED = "the interval decided"
ENDED_MINIMUM = "measured the minimum time"
ENDED_CAP = "inconclusive at max_step_seconds"
ENDED_BAR_CAP = "measured to max_step_seconds"
ENDED_LATENCY_CAP = "latency inconclusive at max_step_seconds"


class SteadyStateRule:
    """The steady-state rule a replay asks at every segment boundary: measure on?"""

    def __init__(
        self,
        ctx: StepContext,
        slots: int,
        compare_with: tuple[Estimate, ...],
        latency_base: Baseline | None = None,
    ) -> None:
        self.ctx, self.slots, self.compare_with = ctx, slots, compare_with
        # the one-slot runs: the base of latency_factor
        self.latency_base = latency_base
        self.why = ENDED_MINIMUM
        self.reached_cap = False

    def __call__(self, turns: list[TurnRecord]) -> bool:
        start = ramp_up_end(turns, self.slots)
        if start is None:
            return True  # not every worker has started: no window yet
        now = self.ctx.clock.monotonic()
        measured = now - start
        if measured < self.ctx.min_step_seconds:
            return True
        if measured >= self.ctx.max_step_seconds:
            self.reached_cap = True
            if self.slots <= 1:
                self.why = ENDED_BAR_CAP
            elif self.compare_with and self.undecided(turns, start, now):
                self.why = ENDED_CAP
            elif self.latency_undecided(turns, start, now):
                self.why = ENDED_LATENCY_CAP
            else:
                # decided, and measured on as the next step's bar
                self.why = ENDED_BAR_CAP if self.compare_with else ENDED_MINIMUM
            return False
        if len(self._ends(turns, start, now)) < WANTED_WINDOW_TURNS:
            return True  # too few turns (or runs) yet for ten batches
        if self.slots <= 1:
            if self.bar_too_wide(turns, start, now):
                return True
            self.why = ENDED_DECIDED if measured > self.ctx.min_step_seconds else ENDED_MINIMUM
            return False
        if self.latency_undecided(turns, start, now):
            return True
        if not self.compare_with:
            self.why = ENDED_MINIMUM
            return False
        if self.undecided(turns, start, now):
            return True
        if self.leads(turns, start, now) and self.bar_too_wide(turns, start, now):
            return True
        self.why = ENDED_DECIDED
        return False

    def leads(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """It serves more than the best step before it: the next step is held to its point,
        so it is measured as a one-slot bar is (the best of brief steps is the luckiest)."""
        here = self._estimate(turns, start, now)
        best = max((bar.value for bar in self.compare_with), default=0.0)
        return here is not None and here.value > best

    def latency_undecided(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """A configured latency bound's p95 interval still reaches both sides of its limit."""
        bounds = self.ctx.bounds_now()
        if self.slots <= 1 or not bounds.latency_bounds:
            return False
        base = self.latency_base
        paired = base.paired if base else None
        figures = turns_latency(turns, self.ctx.corpus.shape, (start, now), base=paired)
        one_slot = base.figures.best_one_slot_latency if base else None
        return bool(undecided_latency_bounds(figures, one_slot, bounds))

    def bar_too_wide(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        """A bar (a one-slot run; the best step so far) is measured until its own interval is
        within half of `min_gain` either side (or the cap): a bar known only to ±20% could
        let no 10% gain qualify however long the steps after it ran."""
        bounds = self.ctx.bounds_now()
        here = self._estimate(turns, start, now)
        if here is None or here.value <= 0 or not here.has_interval:
            return True
        low, high = ratio_interval(here, Estimate(here.value), bounds.confidence) or (0.0, 0.0)
        return (high - low) / 2.0 > bounds.min_gain / 2.0

    def _ends(self, turns: list[TurnRecord], start: float, now: float) -> list[float]:
        """Served turns, or completed runs for a corpus of whole runs: what is decided on."""
        return decisive_ends(turns, start, now, self.ctx.corpus.shape)

    def _estimate(self, turns: list[TurnRecord], start: float, now: float) -> Estimate | None:
        return decisive_estimate(turns, self.slots, self.ctx.corpus.shape, start, now)

    def undecided(self, turns: list[TurnRecord], start: float, now: float) -> bool:
        bounds = self.ctx.bounds_now()
        here = self._estimate(turns, start, now)
        if here is None or not here.has_interval:
            return True  # too few batches: the verdict would read the step as a point
        wanted = 1.0 + bounds.min_gain
        for bar in self.compare_with:
            ratio = ratio_interval(here, bar, bounds.confidence)
            if ratio is not None and ratio[0] < wanted <= ratio[1]:
                return True
        return False
