"""The latency bounds: a step's latency figures (`latency_figures`) against the limits.

A latency bound (`ttft_p95_seconds`; `tpot_p95_seconds` on each turn's mean time per output
token; `itl_p95_seconds` on every gap between tokens; `latency_factor`) is met only where
the whole interval of its p95 is at or below the limit. A p95 whose interval reaches the limit
is undecided: the step measures on while it is (`measurement.stepping.stopping`, up to
`max_step_seconds`). Judged, an undecided p95 never qualifies — at the cap, or re-judged
against a bound set or changed after the step was measured, it is refused with a line saying
what would decide it — and a p95 above its limit is refused whatever its interval. A
configured bound whose figure was never measured (turns recorded unstreamed; for
`itl_p95_seconds`, turns recorded before the gaps between tokens were kept) refuses, as memory
that was not measured does.

`latency_factor` judges the latency a lane's user waits for: for a corpus of whole runs the
run's (first send to last answer, its tools included), for a corpus of segments the turn's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from msgspec.structs import replace

from ..statistics.sequential import look_confidence
from .by_turn import Resampled
from .latency_figures import TURN, UNSTREAMED, LatencyFigures, QuantileSample

if TYPE_CHECKING:
    from ....interfaces.bounds import Bounds


LATENCY_BOUND_KEYS = ("ttft_p95_seconds", "tpot_p95_seconds", "itl_p95_seconds", "latency_factor")


class P95Sample(Protocol):
    """What a p95 is judged on: its point and its interval (`QuantileSample`, `GapSample`)."""

    def value(self, share: float = ...) -> float | None: ...

    def interval(
        self, confidence: float, share: float = ...
    ) -> tuple[float | None, float | None]: ...


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
    sample: P95Sample | None,
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


# (the planned look a step stopped at, of how many): (0, 0) for a step without planned looks
Look = tuple[int, int]


def undecided_latency_bounds(
    step: LatencyFigures | None,
    one_slot: QuantileSample | None,
    bounds: Bounds,
    look: Look = (0, 0),
) -> list[str]:
    """The configured latency bounds whose p95 interval, at `look`, still reaches the limit:
    measuring longer can decide them."""
    if step is None:
        return []
    return _judged(step, one_slot, bounds, look)[1]


def latency_findings(
    step: LatencyFigures | None,
    one_slot: QuantileSample | None,
    bounds: Bounds,
    look: Look = (0, 0),
) -> list[str]:
    """Why a step above one slot does not meet the configured latency bounds (empty: it does).

    `latency_factor` is judged on the p95 over turns of each turn's own ratio to one slot
    (`LatencyFigures.factor_per_turn`, `per_turn`) where the figures hold it. Figures stored
    before it are judged as they were: on the ratio of the step's p95 to one slot's on the
    same turns (`factor_by_turn`, `by_turn`), and, older still, on `one_slot`, the better
    one-slot run's judged latencies (`LatencyFigures.judged`: runs for whole runs, else
    turns), the factor's interval being
    the step's p95 interval over the base's, each at the confidence that leaves the pair
    jointly at `bounds.confidence` (Bonferroni).

    `look`: the planned look the step stopped at, of how many: every interval is then at the
    share of the error that look spent (`statistics.sequential`), as the step's gain is, so
    looking at a latency bound at every look does not give noise more chances to decide it.
    """
    return _judged(step, one_slot, bounds, look)[0]


def _judged(
    step: LatencyFigures | None, one_slot: QuantileSample | None, bounds: Bounds, look: Look
) -> tuple[list[str], list[str]]:
    """(broken, the keys still undecided) of a step against the configured latency bounds."""
    bounds = replace(bounds, confidence=look_confidence(bounds.confidence, *look))
    broken: list[str] = []
    undecided: list[str] = []
    at_cap = step is not None and step.measured_to_cap
    checks: list[tuple[str, str, float | None, P95Sample | None, Resampled | None]] = [
        ("ttft_p95_seconds", "TTFT", bounds.ttft_p95_seconds, None, None),
        ("tpot_p95_seconds", "TPOT", bounds.tpot_p95_seconds, None, None),
        ("itl_p95_seconds", "ITL", bounds.itl_p95_seconds, None, None),
    ]
    if step is not None:
        checks = [
            ("ttft_p95_seconds", "TTFT", bounds.ttft_p95_seconds, step.ttft, step.ttft_by_turn),
            ("tpot_p95_seconds", "TPOT", bounds.tpot_p95_seconds, step.tpot, step.tpot_by_turn),
            ("itl_p95_seconds", "ITL", bounds.itl_p95_seconds, step.itl, step.itl_by_turn),
        ]
    for key, what, limit, sample, by_turn in checks:
        if limit is None:
            continue
        if sample is None and key == "itl_p95_seconds" and step and step.itl_missing:
            broken.append(f"{key}: ITL not measured ({step.itl_missing})")
            continue
        bad, open_ = _against(key, what, sample, limit, bounds.confidence, at_cap, by_turn)
        broken += [bad] if bad else []
        undecided += [key] if open_ else []
    factor = bounds.latency_factor
    if factor is not None:
        what, judged = step.judged if step else (TURN, None)
        if step is not None and step.factor_per_turn is not None:
            per_turn = step.factor_per_turn
            bad, open_ = _per_turn_factor(what, judged, per_turn, factor, bounds, at_cap)
        elif step is not None and step.factor_by_turn is not None:
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
    """`latency_factor` on figures stored before per-turn ratios: the ratio of two p95s on
    the same turns (runs) at one slot and here, resampled by turn; the line says so."""
    low, high = paired.interval(bounds.confidence)
    shown = (
        f"p95 {what} latency {_seconds(step.value() if step else None)} = "
        f"{paired.point:.2f}× one slot's on the same {what}s ({_range(low, high, '×')}; "
        "a ratio of two p95s, as figures stored before per-turn ratios are judged)"
    )
    return _finding("latency_factor", shown, paired.point, low, high, factor, "×", at_cap)


def _per_turn_factor(
    what: str,
    step: QuantileSample | None,
    per_turn: Resampled,
    factor: float,
    bounds: Bounds,
    at_cap: bool,
) -> tuple[str | None, bool]:
    """`latency_factor` on each turn's (run's) own ratio to one slot, at p95 over them."""
    low, high = per_turn.interval(bounds.confidence)
    shown = (
        f"p95 {what} latency {_seconds(step.value() if step else None)}, each {what} "
        f"{per_turn.point:.2f}× its own at one slot at p95 over {per_turn.turns} {what}s "
        f"({_range(low, high, '×')})"
    )
    return _finding("latency_factor", shown, per_turn.point, low, high, factor, "×", at_cap)
