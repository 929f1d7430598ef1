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
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import msgspec
from msgspec.structs import replace

from ....errors import MalformedJson
from ....interfaces import json_fields
from ..statistics.stats import quantile_ranks
from .by_turn import Resampled
from .gap_sample import GapSample

if TYPE_CHECKING:
    pass

P95 = 0.95
# the widest interval a figure must still bound: the bounds' confidence is at most this
MAX_CONFIDENCE = 0.999
UNSTREAMED = "turns recorded unstreamed (no token timing)"
OLD_ITL_WAS_TPOT = (
    "turns recorded before the gaps between tokens were kept: their ITL figure was each "
    "turn's mean gap, read here as TPOT"
)
T = TypeVar("T")
RUN, TURN = "run", "turn"


def nearest_rank(count: int, share: float) -> int:
    return max(1, math.ceil(share * count))


class QuantileSample(msgspec.Struct, frozen=True):
    """What a sample's upper quantiles and their intervals need: its size and its sorted
    values from rank `tail_from` (1-based) up."""

    count: int
    tail_from: int
    tail: tuple[float, ...]

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

    def to_json(self) -> dict[str, object]:
        return {"count": self.count, "tail_from": self.tail_from, "tail": list(self.tail)}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> QuantileSample:
        """A stored sample; MalformedJson naming a field of the wrong type or range."""
        count = json_fields.integer(data, "count")
        start = json_fields.integer(data, "tail_from")
        tail = json_fields.optional_numbers(json_fields.items(data, "tail"), "tail")
        if count < 1 or not 1 <= start <= count or len(tail) != count - start + 1:
            raise MalformedJson(f"expected a tail of ranks {start}…{count}, got {len(tail)}")
        values = tuple(float(v) for v in tail if v is not None)
        if len(values) != len(tail) or list(values) != sorted(values):
            raise MalformedJson("expected sorted numbers", ("tail",))
        if not all(math.isfinite(v) and v >= 0.0 for v in values):
            raise MalformedJson("expected finite numbers ≥ 0", ("tail",))
        return cls(count, start, values)


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

    def to_json(self) -> dict[str, object]:
        return {
            "mean_s": self.mean_s,
            "p50_s": self.p50_s,
            "p90_s": self.p90_s,
            "p95_s": self.p95_s,
            "p99_s": self.p99_s,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Summary:
        return cls(*(json_fields.number(data, key) for key in cls.KEYS))

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
    figures hold instead of factor_by_turn (a ratio of two p95s, kept for stored figures).
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
    tpot_p50_s: float | None
    tpot: QuantileSample | None
    decode_tokens_per_s_p50: float | None
    missing: str | None = None
    whole_runs: bool = False
    run_p50_s: float | None = None
    run: QuantileSample | None = None
    measured_to_cap: bool = False
    ttft_by_turn: Resampled | None = None
    tpot_by_turn: Resampled | None = None
    factor_by_turn: Resampled | None = None
    itl: GapSample | None = None
    itl_missing: str | None = None
    ttft_s: Summary | None = None
    tpot_s: Summary | None = None
    itl_s: Summary | None = None
    itl_by_turn: Resampled | None = None
    factor_per_turn: Resampled | None = None

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

    def to_json(self) -> dict[str, object]:
        return {
            "turns": self.turns,
            "timed": self.timed,
            "latency_p50_s": self.latency_p50_s,
            "latency_p95_s": self.latency.value() if self.latency else None,
            "latency": self.latency.to_json() if self.latency else None,
            "ttft_p50_s": self.ttft_p50_s,
            "ttft_p95_s": self.ttft.value() if self.ttft else None,
            "ttft": self.ttft.to_json() if self.ttft else None,
            "tpot_p50_s": self.tpot_p50_s,
            "tpot_p95_s": self.tpot.value() if self.tpot else None,
            "tpot": self.tpot.to_json() if self.tpot else None,
            "itl_p95_s": self.itl.value() if self.itl else None,
            "itl_gaps": self.itl.to_json() if self.itl else None,
            "itl_missing": self.itl_missing,
            "decode_tokens_per_s_p50": self.decode_tokens_per_s_p50,
            "missing": self.missing,
            "whole_runs": self.whole_runs,
            "run_p50_s": self.run_p50_s,
            "run_p95_s": self.run.value() if self.run else None,
            "run": self.run.to_json() if self.run else None,
            "measured_to_cap": self.measured_to_cap,
            **{
                key: value.to_json() if value else None
                for key, value in (
                    ("ttft_by_turn", self.ttft_by_turn),
                    ("tpot_by_turn", self.tpot_by_turn),
                    ("factor_by_turn", self.factor_by_turn),
                    ("ttft_s", self.ttft_s),
                    ("tpot_s", self.tpot_s),
                    ("itl_s", self.itl_s),
                    ("itl_by_turn", self.itl_by_turn),
                    ("factor_per_turn", self.factor_per_turn),
                )
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> LatencyFigures:
        """Stored figures; MalformedJson naming a field of the wrong type."""
        return cls(
            turns=json_fields.integer(data, "turns"),
            timed=json_fields.integer(data, "timed"),
            latency_p50_s=json_fields.number(data, "latency_p50_s", None),
            latency=_sample(data, "latency"),
            ttft_p50_s=json_fields.number(data, "ttft_p50_s", None),
            ttft=_sample(data, "ttft"),
            # figures from before ITL was every gap: their "itl" was TPOT
            tpot_p50_s=json_fields.number(data, _tpot_key(data, "p50_s"), None),
            tpot=_sample(data, "tpot" if "tpot" in data else "itl"),
            decode_tokens_per_s_p50=json_fields.number(data, "decode_tokens_per_s_p50", None),
            missing=json_fields.text(data, "missing", None),
            # figures from before run latency was judged, or the cap was known
            whole_runs=json_fields.boolean(data, "whole_runs", False),
            run_p50_s=json_fields.number(data, "run_p50_s", None),
            run=_sample(data, "run"),
            measured_to_cap=json_fields.boolean(data, "measured_to_cap", False),
            # figures from before the p95s were resampled by turn: judged on their samples
            ttft_by_turn=_resampled(data, "ttft_by_turn"),
            tpot_by_turn=_resampled(data, "tpot_by_turn"),
            factor_by_turn=_resampled(data, "factor_by_turn"),
            itl=_nested(data, "itl_gaps", GapSample.from_json),
            itl_missing=json_fields.text(data, "itl_missing", None)
            if "tpot" in data
            else OLD_ITL_WAS_TPOT,
            ttft_s=_nested(data, "ttft_s", Summary.from_json),
            tpot_s=_nested(data, "tpot_s", Summary.from_json),
            itl_s=_nested(data, "itl_s", Summary.from_json),
            # figures from before ITL was resampled by turn: judged on its gaps' ranks alone
            itl_by_turn=_resampled(data, "itl_by_turn"),
            # figures from before per-turn ratios: their factor_by_turn is a ratio of two p95s
            factor_per_turn=_resampled(data, "factor_per_turn"),
        )


def _sample(data: dict[str, object], key: str) -> QuantileSample | None:
    if data.get(key) is None:
        return None
    return json_fields.nested(data, key, QuantileSample.from_json)


def _resampled(data: dict[str, object], key: str) -> Resampled | None:
    return _nested(data, key, Resampled.from_json)


def _nested(data: dict[str, object], key: str, read: Callable[[dict[str, object]], T]) -> T | None:
    if data.get(key) is None:
        return None
    return json_fields.nested(data, key, read)


def _tpot_key(data: dict[str, object], suffix: str) -> str:
    return f"tpot_{suffix}" if "tpot" in data else f"itl_{suffix}"
