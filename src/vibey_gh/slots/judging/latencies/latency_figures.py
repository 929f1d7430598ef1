"""Latency figures and the latency bounds: what a step's p95s are judged on.

A p95 is judged on an interval, distribution-free: the order statistics that hold the true
quantile between them at the bounds' confidence (`stats.quantile_ranks`). A figure keeps only
what such an interval needs, the sample's size and its sorted upper tail, so figures stay
small and independent of the bounds. (`latency.py` makes the figures from recorded turns;
this module imports nothing about turns, so reading stored figures does not.)

`latency_factor` judges the latency a lane's user waits for: for a corpus of whole runs the
run's (first send to last answer, its tools included), for a corpus of segments the turn's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType, field
from msgspec.structs import force_setattr, replace

from ..statistics.figure_fields import Amount
from ..statistics.stats import quantile_ranks
from .by_turn import Resampled
from .gap_sample import GapSample

P95 = 0.95
# the widest interval a figure must still bound: the bounds' confidence is at most this
MAX_CONFIDENCE = 0.999
UNSTREAMED = "turns recorded unstreamed (no token timing)"
OLD_ITL_WAS_TPOT = (
    "turns recorded before the gaps between tokens were kept: their ITL figure was each "
    "turn's mean gap, read here as TPOT"
)
RUN, TURN = "run", "turn"


def nearest_rank(count: int, share: float) -> int:
    return max(1, math.ceil(share * count))


class QuantileSample(msgspec.Struct, frozen=True):
    """What a sample's upper quantiles and their intervals need: its size and its sorted
    values from rank `tail_from` (1-based) up."""

    count: Annotated[int, Meta(ge=1)]
    tail_from: Annotated[int, Meta(ge=1)]
    tail: tuple[Amount, ...]

    def __post_init__(self) -> None:
        if self.tail_from > self.count or len(self.tail) != self.count - self.tail_from + 1:
            raise ValueError(
                f"expected a tail of ranks {self.tail_from}…{self.count}, got {len(self.tail)}"
            )
        if list(self.tail) != sorted(self.tail):
            raise ValueError("tail: expected sorted numbers")

    @classmethod
    def of(cls, values: Sequence[float], share: float = P95) -> QuantileSample | None:
        if not values:
            return None
        ordered = sorted(values)
        low, _ = quantile_ranks(len(ordered), share, MAX_CONFIDENCE)
        start = min(low or 1, nearest_rank(len(ordered), share))
        return cls(len(ordered), start, tuple(ordered[start - 1 :]))

    def _at(self, rank: int | None) -> float | None:
        if rank is None or rank < self.tail_from or rank > self.count:
            return None
        return self.tail[rank - self.tail_from]

    def value(self, share: float = P95) -> float | None:
        return self._at(nearest_rank(self.count, share))

    def interval(self, confidence: float, share: float = P95) -> tuple[float | None, float | None]:
        """(low, high) of the quantile at `confidence`; None for a side too few values bound."""
        low, high = quantile_ranks(self.count, share, confidence)
        return self._at(low), self._at(high)


class Summary(msgspec.Struct, frozen=True):
    """Mean, p50, p90, p95 and p99 of one latency (nearest rank), in seconds."""

    mean_s: float
    p50_s: float
    p90_s: float
    p95_s: float
    p99_s: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary | None:
        if not values:
            return None
        ordered = sorted(values)

        def at(share: float) -> float:
            return ordered[nearest_rank(len(ordered), share) - 1]

        return cls(sum(ordered) / len(ordered), at(0.5), at(0.9), at(0.95), at(0.99))

    @classmethod
    def of_gaps(cls, gaps: GapSample | None) -> Summary | None:
        if gaps is None:
            return None
        at = [gaps.value(share) or 0.0 for share in (0.5, 0.9, 0.95, 0.99)]
        return cls(gaps.mean_s, *at)

    KEYS = ("mean_s", "p50_s", "p90_s", "p95_s", "p99_s")


class LatencyFigures(msgspec.Struct, frozen=True):
    """A step's latency figures.

    turns: served turns counted; timed: of them, streamed with token timing.
    TTFT: from sending a turn to its first token; TPOT: a turn's mean time per output token
    after the first; ITL: every gap between tokens, each its own sample (as vLLM names them).
    *_p50_s: medians; latency / ttft / tpot: samples for the p95s and their intervals, itl:
    the pooled gaps (None where no turn was timed, or, for itl, none kept its gaps).
    ttft_s / tpot_s / itl_s: mean, p50, p90, p95 and p99 of each. missing: why TTFT, TPOT and
    ITL are absent, else None; itl_missing: why ITL alone is (turns recorded before the gaps
    were kept: the "itl" such figures stored was TPOT, and is read as TPOT). *_by_turn: the
    p95s, and the paired factor, resampled by turn (None in figures made before);
    factor_per_turn: the p95 of each turn's own ratio to one slot (`per_turn`), which new
    figures hold instead of factor_by_turn (a ratio of two p95s, kept for stored figures);
    its replicates are kept as its interval reads them (`per_turn.reflected`; figures stored
    before hold the replicates' own p95s, and are read so).
    whole_runs: the corpus holds whole runs; run / run_p50_s: then the completed runs'
    latencies (None for a corpus of segments). measured_to_cap: the step measured until
    `max_step_seconds`, so a p95 still inconclusive there stays so.
    """

    turns: int
    timed: int
    latency_p50_s: float | None
    latency: QuantileSample | None
    ttft_p50_s: float | None
    ttft: QuantileSample | None
    # figures from before ITL was every gap held TPOT as "itl" (read below as TPOT)
    tpot_p50_s: float | None = None
    tpot: QuantileSample | None = None
    decode_tokens_per_s_p50: float | None = None
    missing: str | None = None
    # figures from before run latency was judged, or the cap was known
    whole_runs: bool = False
    run_p50_s: float | None = None
    run: QuantileSample | None = None
    measured_to_cap: bool = False
    # figures from before the p95s were resampled by turn: judged on their samples
    ttft_by_turn: Resampled | None = None
    tpot_by_turn: Resampled | None = None
    factor_by_turn: Resampled | None = None
    itl: GapSample | None = field(default=None, name="itl_gaps")
    itl_missing: str | None = None
    ttft_s: Summary | None = None
    tpot_s: Summary | None = None
    itl_s: Summary | None = None
    # figures from before ITL was resampled by turn: judged on its gaps' ranks alone
    itl_by_turn: Resampled | None = None
    # figures from before per-turn ratios: their factor_by_turn is a ratio of two p95s
    factor_per_turn: Resampled | None = None
    # each sample's p95, written for a reader of the figures (recomputed, never read back)
    latency_p95_s: float | None = None
    ttft_p95_s: float | None = None
    tpot_p95_s: float | None = None
    itl_p95_s: float | None = None
    run_p95_s: float | None = None
    # read only, from figures of before ITL was every gap: their TPOT, under ITL's name
    old_itl: QuantileSample | None | UnsetType = field(default=UNSET, name="itl")
    old_itl_p50_s: float | None | UnsetType = field(default=UNSET, name="itl_p50_s")

    def __post_init__(self) -> None:
        if self.old_itl is not UNSET:  # figures from before ITL was every gap
            if self.tpot is None and self.tpot_p50_s is None:
                force_setattr(self, "tpot", self.old_itl)
                force_setattr(self, "tpot_p50_s", self.old_itl_p50_s or None)
                force_setattr(self, "itl_missing", OLD_ITL_WAS_TPOT)
            force_setattr(self, "old_itl", UNSET)
            force_setattr(self, "old_itl_p50_s", UNSET)
        for name, sample in (
            ("latency_p95_s", self.latency),
            ("ttft_p95_s", self.ttft),
            ("tpot_p95_s", self.tpot),
            ("itl_p95_s", self.itl),
            ("run_p95_s", self.run),
        ):
            force_setattr(self, name, sample.value() if sample else None)

    def resampled(
        self,
        ttft: Resampled | None,
        tpot: Resampled | None,
        factor: Resampled | None,
        itl: Resampled | None = None,
    ) -> LatencyFigures:
        """`factor`: the per-turn ratios' p95 (`per_turn`); `factor_by_turn`, the older ratio
        of two p95s, is only read from figures stored before."""
        return replace(
            self, ttft_by_turn=ttft, tpot_by_turn=tpot, factor_per_turn=factor, itl_by_turn=itl
        )

    @property
    def judged(self) -> tuple[str, QuantileSample | None]:
        """(what, sample) `latency_factor` judges: the run's latency for whole runs, else
        the turn's."""
        return (RUN, self.run) if self.whole_runs else (TURN, self.latency)
