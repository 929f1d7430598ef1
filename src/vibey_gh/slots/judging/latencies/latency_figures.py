"""Latency figures and the latency bounds: what a step's p95s are judged on.

A p95 is judged on an interval, distribution-free: the order statistics that hold the true
quantile between them at the bounds' confidence (`stats.quantile_ranks`). A figure keeps only
what such an interval needs, the sample's size and its sorted upper tail, so figures stay
small and independent of the bounds. (`latency.py` makes the figures from recorded turns;
this module imports nothing about turns, so reading stored figures does not.)

A latency bound (`ttft_p95_seconds`, `itl_p95_seconds`, `latency_factor`) is met only where
the whole interval of its p95 is at or below the limit. A p95 whose interval reaches the limit
is undecided: the step measures on while it is (`measurement.stepping.stopping`, up to
`max_step_seconds`). Judged, an undecided p95 never qualifies — at the cap, or re-judged
against a bound set or changed after the step was measured, it is refused with a line saying
what would decide it — and a p95 above its limit is refused whatever its interval. A
configured bound whose figure was never measured (turns recorded unstreamed) refuses, as
memory that was not measured does.

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
    from ..bounds import Bounds

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


# ---------------------------------------------------------------------------------------------
# The bounds
# ---------------------------------------------------------------------------------------------

LATENCY_BOUND_KEYS = ("ttft_p95_seconds", "itl_p95_seconds", "latency_factor")


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g} s"


def _range(low: float | None, high: float | None, unit: str = " s") -> str:
    def shown(v: float | None) -> str:
        return "…" if v is None else f"{v:.3g}"

    return f"{shown(low)}–{shown(high)}{unit}"


INCONCLUSIVE_AT_CAP = "inconclusive at max_step_seconds"
LONGER_AT_CAP = "measure again with a longer max_step_seconds to decide it"
UNDECIDED_WHEN_ENDED = (
    "undecided when the step ended (a bound set or changed after calibrating?): "
    "calibrate again, with longer steps if need be, to decide it"
)


def _undecided(doubt: str, at_cap: bool) -> str:
    """An interval reaching the limit: never a pass, and the line says what would decide it."""
    if at_cap:
        return f"{doubt}, {INCONCLUSIVE_AT_CAP}: {LONGER_AT_CAP}"
    return f"{doubt}, {UNDECIDED_WHEN_ENDED}"


def _finding(
    key: str,
    shown: str,
    point: float,
    low: float | None,
    high: float | None,
    limit: float,
    unit: str,
    at_cap: bool,
) -> tuple[str | None, bool]:
    """(broken, undecided) of a p95 (`point`, interval `low`–`high`) against `limit`.

    Above the limit — its interval, or its point while the interval reaches both sides — is
    broken; an interval reaching the limit is undecided (measuring on may decide it) and, as a
    verdict, broken too: what cannot be decided is refused."""
    undecided = high is None or high > limit
    if low is not None and low > limit:
        return f"{key}: {shown} above {limit:.3g}{unit}", False
    if point > limit:
        return f"{key}: {shown} above {limit:.3g}{unit} (its interval reaches below)", True
    if undecided:
        return _undecided(f"{key}: {shown} may be above {limit:.3g}{unit}", at_cap), True
    return None, False


def _union(
    one: tuple[float | None, float | None], other: tuple[float | None, float | None]
) -> tuple[float | None, float | None]:
    """The span of two intervals of one p95 (a side either cannot bound stays unbounded): a
    limit is decided only where both agree."""
    low = None if one[0] is None or other[0] is None else min(one[0], other[0])
    high = None if one[1] is None or other[1] is None else max(one[1], other[1])
    return low, high


def _against(
    key: str,
    what: str,
    sample: QuantileSample | None,
    limit: float,
    confidence: float,
    at_cap: bool = False,
    by_turn: Resampled | None = None,
) -> tuple[str | None, bool]:
    """(broken, undecided) of one p95 against an absolute limit in seconds. Its interval is
    the distribution-free one, widened to the one resampled by turn where there is one."""
    if sample is None:
        return f"{key}: {what} not measured ({UNSTREAMED})", False
    low, high = sample.interval(confidence)
    if by_turn is not None:
        low, high = _union((low, high), by_turn.interval(confidence))
    point = sample.value() or 0.0
    shown = f"p95 {what} {_seconds(point)} ({_range(low, high)})"
    return _finding(key, shown, point, low, high, limit, " s", at_cap)


def undecided_latency_bounds(
    step: LatencyFigures | None, one_slot: QuantileSample | None, bounds: Bounds
) -> list[str]:
    """The configured latency bounds whose p95 interval still reaches the limit: measuring
    longer can decide them."""
    if step is None:
        return []
    return _judged(step, one_slot, bounds)[1]


def latency_findings(
    step: LatencyFigures | None,
    one_slot: QuantileSample | None,
    bounds: Bounds,
) -> list[str]:
    """Why a step above one slot does not meet the configured latency bounds (empty: it does).

    `one_slot`: the better one-slot run's judged latencies (`LatencyFigures.judged`: runs
    for whole runs, else turns), the base of `latency_factor`. The
    factor's interval is the step's p95 interval over the base's, each at the confidence that
    leaves the pair jointly at `bounds.confidence` (Bonferroni).
    """
    return _judged(step, one_slot, bounds)[0]


def _judged(
    step: LatencyFigures | None, one_slot: QuantileSample | None, bounds: Bounds
) -> tuple[list[str], list[str]]:
    """(broken, the keys still undecided) of a step against the configured latency bounds."""
    broken: list[str] = []
    undecided: list[str] = []
    at_cap = step is not None and step.measured_to_cap
    checks = (
        ("ttft_p95_seconds", "TTFT", bounds.ttft_p95_seconds, step.ttft if step else None),
        ("itl_p95_seconds", "ITL", bounds.itl_p95_seconds, step.itl if step else None),
    )
    resampled = {
        "ttft_p95_seconds": step.ttft_by_turn if step else None,
        "itl_p95_seconds": step.itl_by_turn if step else None,
    }
    for key, what, limit, sample in checks:
        if limit is None:
            continue
        by_turn = resampled[key]
        bad, open_ = _against(key, what, sample, limit, bounds.confidence, at_cap, by_turn)
        broken += [bad] if bad else []
        undecided += [key] if open_ else []
    factor = bounds.latency_factor
    if factor is not None:
        what, judged = step.judged if step else (TURN, None)
        if step is not None and step.factor_by_turn is not None:
            bad, open_ = _paired_factor(what, judged, step.factor_by_turn, factor, bounds, at_cap)
        else:
            bad, open_ = _factor_finding(what, judged, one_slot, factor, bounds, at_cap)
        broken += [bad] if bad else []
        undecided += ["latency_factor"] if open_ else []
    return broken, undecided


def factor_interval(
    step: QuantileSample, one_slot: QuantileSample, confidence: float
) -> tuple[float | None, float | None]:
    """The interval of (step's p95) / (one slot's p95), both measured."""
    each = 1.0 - (1.0 - confidence) / 2.0
    s_low, s_high = step.interval(each)
    b_low, b_high = one_slot.interval(each)
    low = s_low / b_high if s_low is not None and b_high else None
    high = s_high / b_low if s_high is not None and b_low else None
    return low, high


def _factor_finding(
    what: str,
    step: QuantileSample | None,
    one_slot: QuantileSample | None,
    factor: float,
    bounds: Bounds,
    at_cap: bool,
) -> tuple[str | None, bool]:
    key = "latency_factor"
    if step is None or one_slot is None or not one_slot.value():
        return f"{key}: p95 {what} latency not measured at one slot and here", False
    low, high = factor_interval(step, one_slot, bounds.confidence)
    point = (step.value() or 0.0) / (one_slot.value() or 1.0)
    shown = (
        f"p95 {what} latency {_seconds(step.value())} = {point:.2f}× one slot's "
        f"{_seconds(one_slot.value())} ({_range(low, high, '×')})"
    )
    return _finding(key, shown, point, low, high, factor, "×", at_cap)


def _paired_factor(
    what: str,
    step: QuantileSample | None,
    paired: Resampled,
    factor: float,
    bounds: Bounds,
    at_cap: bool,
) -> tuple[str | None, bool]:
    """`latency_factor` on the same turns (runs) at one slot and here, resampled by turn."""
    low, high = paired.interval(bounds.confidence)
    shown = (
        f"p95 {what} latency {_seconds(step.value() if step else None)} = "
        f"{paired.point:.2f}× one slot's on the same {what}s ({_range(low, high, '×')})"
    )
    return _finding("latency_factor", shown, paired.point, low, high, factor, "×", at_cap)
