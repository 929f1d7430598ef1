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
from dataclasses import replace
from typing import TYPE_CHECKING

from ....errors import MalformedJson
from ....interfaces import json_fields
from ....interfaces.values import frozen_value
from ..statistics.stats import quantile_ranks
from .by_turn import Resampled

if TYPE_CHECKING:
    pass

P95 = 0.95
# the widest interval a figure must still bound: the bounds' confidence is at most this
MAX_CONFIDENCE = 0.999
UNSTREAMED = "turns recorded unstreamed (no token timing)"
RUN, TURN = "run", "turn"


def nearest_rank(count: int, share: float) -> int:
    return max(1, math.ceil(share * count))


@frozen_value
class QuantileSample:
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


@frozen_value
class LatencyFigures:
    """A step's latency figures.

    turns: served turns counted; timed: of them, streamed with token timing.
    *_p50_s: medians; latency / ttft / itl: samples for the p95s and their intervals (None
    where no turn was timed). missing: why TTFT and ITL are absent, else None.
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
    itl_p50_s: float | None
    itl: QuantileSample | None
    decode_tokens_per_s_p50: float | None
    missing: str | None = None
    whole_runs: bool = False
    run_p50_s: float | None = None
    run: QuantileSample | None = None
    measured_to_cap: bool = False
    ttft_by_turn: Resampled | None = None
    itl_by_turn: Resampled | None = None
    factor_by_turn: Resampled | None = None

    def resampled(
        self, ttft: Resampled | None, itl: Resampled | None, factor: Resampled | None
    ) -> LatencyFigures:
        return replace(self, ttft_by_turn=ttft, itl_by_turn=itl, factor_by_turn=factor)

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
            "itl_p50_s": self.itl_p50_s,
            "itl_p95_s": self.itl.value() if self.itl else None,
            "itl": self.itl.to_json() if self.itl else None,
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
                    ("itl_by_turn", self.itl_by_turn),
                    ("factor_by_turn", self.factor_by_turn),
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
            itl_p50_s=json_fields.number(data, "itl_p50_s", None),
            itl=_sample(data, "itl"),
            decode_tokens_per_s_p50=json_fields.number(data, "decode_tokens_per_s_p50", None),
            missing=json_fields.text(data, "missing", None),
            # figures from before run latency was judged, or the cap was known
            whole_runs=json_fields.boolean(data, "whole_runs", False),
            run_p50_s=json_fields.number(data, "run_p50_s", None),
            run=_sample(data, "run"),
            measured_to_cap=json_fields.boolean(data, "measured_to_cap", False),
            # figures from before the p95s were resampled by turn: judged on their samples
            ttft_by_turn=_resampled(data, "ttft_by_turn"),
            itl_by_turn=_resampled(data, "itl_by_turn"),
            factor_by_turn=_resampled(data, "factor_by_turn"),
        )


def _sample(data: dict[str, object], key: str) -> QuantileSample | None:
    if data.get(key) is None:
        return None
    return json_fields.nested(data, key, QuantileSample.from_json)


def _resampled(data: dict[str, object], key: str) -> Resampled | None:
    if data.get(key) is None:
        return None
    return json_fields.nested(data, key, Resampled.from_json)
