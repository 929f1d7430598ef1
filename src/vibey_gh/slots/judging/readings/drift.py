"""Does the answer hold over hours? A soak's drift, decided on intervals (pure: no I/O).

A soak replays the corpus at one N for hours, in one or more spans (a resumed soak starts a
new span: the runner was restarted). Each span is cut into windows of one fixed length; each
window's throughput has an interval from its batch means, as a step's does. The soak:

- *holds* when the last window's throughput is, at the bounds' confidence, within `min_gain`
  of the first window's (the ratio's interval lies above 1 − min_gain), no bound broke at any
  tick, and the runner's memory is not growing without bound;
- *drifted* when the ratio's interval lies wholly below 1 − min_gain, or memory grows without
  bound (its growth's interval is above zero and, at its low end, would use up the free
  memory left within a day);
- is *inconclusive* when the interval straddles 1 − min_gain, or fewer than two windows were
  measured;
- *broke a bound* when any tick broke one (`reading_bounds`).

A throttle reason that appears does not itself decide: if the throughput still held, it cost
nothing and the verdict says so; if it fell, the reason is named as the likely cause.
The trend is the least-squares slope of the windows' throughputs over time, with its
interval, as a share of the first window per hour.

The runner's memory is fitted after its warm-up only: a runner fills its caches in the first
pass over the corpus, and that rise extrapolated to a day would cry wolf. The fit starts at the
first pass's end or once the memory has levelled, whichever comes first, and needs
`MEMORY_SPAN_S` of readings after it; a shorter soak says "undecided, soak at least X", never
that memory drifted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import msgspec
from msgspec import field

from ....interfaces.bounds import Bounds
from ....interfaces.durations import format_duration
from ....interfaces.readings import THROTTLED_SUFFIX, ReadingSample
from ..metrics import batch_standard_error, batch_throughputs
from ..statistics.stats import Estimate, ratio_interval, t_quantile
from .reading_bounds import BoundBreak, breaks_over_time, reading_bounds_of, swap_out_breaks

HOLDS, DRIFTED, INCONCLUSIVE, BROKE = "holds", "drifted", "inconclusive", "broke a bound"
VERDICTS = (HOLDS, DRIFTED, INCONCLUSIVE, BROKE)
HOURS_TO_EXHAUST = 24.0
# seconds of memory readings after the warm-up that a memory trend is fitted on, at least
MEMORY_SPAN_S = 300.0
# memory has levelled once it never again rises more than this share above a reading
LEVELLED_SHARE = 0.02
# what `_as_throughput_went` chooses among (a reason, or the throttles' likely cost)
_T = TypeVar("_T")


class SoakSpan(msgspec.Struct, frozen=True):
    """One continuous stretch of replay: from `start` (the workers all started) to `end`, in
    the span's own monotonic seconds, and when each decided unit (turn or run) ended."""

    start: float
    end: float
    ends: tuple[float, ...]


class SoakWindow(msgspec.Struct, frozen=True):
    """A window's throughput (units per hour) with its standard error, and where it sits in
    the soak's measured time (seconds since the soak began measuring)."""

    at_s: float
    length_s: float
    units: int
    throughput: float
    se: float | None
    batches: int

    @property
    def estimate(self) -> Estimate:
        return Estimate(self.throughput, self.se, self.batches)


class Trend(msgspec.Struct, frozen=True):
    """A least-squares slope with its interval at the bounds' confidence (None: too few)."""

    slope: float
    low: float | None
    high: float | None


class SoakJudgement(msgspec.Struct, frozen=True):
    verdict: str
    reasons: tuple[str, ...]
    windows: tuple[SoakWindow, ...]
    last_over_first: tuple[float, float, float] | None  # point, low, high
    trend_per_hour: Trend | None  # as a share of the first window's throughput
    rss_per_hour: Trend | None  # bytes per hour
    throttles: tuple[str, ...]
    throttle_cost: str | None  # "none" (held anyway), "likely" (throughput fell), None
    breaks: tuple[BoundBreak, ...] = field(default_factory=tuple)
    unjudged: tuple[str, ...] = field(default_factory=tuple)

    @property
    def holds(self) -> bool:
        return self.verdict == HOLDS

    def recorded(self) -> JudgedSoak:
        """The judgement as a soak file records it (and `slots soak --json` answers it)."""
        ratio = self.last_over_first
        return JudgedSoak(
            self.verdict, self.holds, self.reasons, self.windows,
            None if ratio is None else Ratio(*ratio),
            self.trend_per_hour, self.rss_per_hour, self.throttles, self.throttle_cost,
            self.breaks, self.unjudged,
        )  # fmt: skip


class Ratio(msgspec.Struct, frozen=True):
    """The last window's throughput over the first's, with its interval."""

    value: float
    low: float
    high: float


class JudgedSoak(msgspec.Struct, frozen=True):
    """A soak's judgement as its file records it (written by `as_json`), `holds` spelled out."""

    verdict: str
    holds: bool
    reasons: tuple[str, ...]
    windows: tuple[SoakWindow, ...]
    last_over_first: Ratio | None
    trend_per_hour: Trend | None
    rss_per_hour: Trend | None
    throttles: tuple[str, ...]
    throttle_cost: str | None
    breaks: tuple[BoundBreak, ...]
    unjudged: tuple[str, ...]


def windows_of(spans: Sequence[SoakSpan], window_s: float) -> list[SoakWindow]:
    """Whole windows of each span (a span's last partial window is left out)."""
    out: list[SoakWindow] = []
    offset = 0.0
    for span in spans:
        count = int((span.end - span.start) // window_s) if window_s > 0 else 0
        for k in range(count):
            start = span.start + k * window_s
            end = start + window_s
            ends = [e for e in span.ends if start < e <= end]
            batches = batch_throughputs(ends, start, end)
            se = batch_standard_error(batches, start, end)
            out.append(
                SoakWindow(offset + k * window_s, window_s, len(ends),
                           len(ends) * 3600.0 / window_s, se, len(batches))
            )  # fmt: skip
        offset += max(0.0, span.end - span.start)
    return out


def trend(points: Sequence[tuple[float, float]], confidence: float) -> Trend | None:
    """Least-squares slope of y over x, with its t interval (None below two points)."""
    n = len(points)
    if n < 2:
        return None
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx <= 0:
        return None
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    if n < 3:
        return Trend(slope, None, None)
    residual = sum((y - mean_y - slope * (x - mean_x)) ** 2 for x, y in points)
    se = math.sqrt(residual / (n - 2) / sxx)
    half = t_quantile(0.5 + confidence / 2.0, n - 2) * se
    return Trend(slope, slope - half, slope + half)


def _throttles(samples: Sequence[tuple[float, ReadingSample]]) -> list[str]:
    seen: list[str] = []
    for _at, sample in samples:
        for name, reading in sample.readings.items():
            if name.endswith(THROTTLED_SUFFIX) and reading.value:
                source = name.removesuffix(THROTTLED_SUFFIX)
                said = f"{source}: {sample.notes.get(name) or 'throttled'}"
                if said not in seen:
                    seen.append(said)
    return seen


def levelled_at(points: Sequence[tuple[float, float]]) -> float | None:
    """The earliest time after which the readings never rise more than `LEVELLED_SHARE`
    above the one read then (None: still rising at the last reading)."""
    if len(points) < 2:
        return None
    highest_after = points[-1][1]
    levelled: float | None = None
    for at, value in reversed(points[:-1]):
        if highest_after <= value * (1.0 + LEVELLED_SHARE):
            levelled = at
        highest_after = max(highest_after, value)
    return levelled


def _whole_minutes(warm_up_s: float) -> float:
    """The soak that would decide: the warm-up and `MEMORY_SPAN_S`, up to a whole minute."""
    return math.ceil((warm_up_s + MEMORY_SPAN_S) / 60.0) * 60.0


def _memory(
    samples: Sequence[tuple[float, ReadingSample]],
    confidence: float,
    warm_up_s: float | None = 0.0,
) -> tuple[Trend | None, str | None, str | None]:
    """The runner's resident memory per hour after its warm-up (`warm_up_s`: the first pass's
    end, None when unknown); a problem when it grows without bound; why it could not be
    judged."""
    readings = [
        (at, rss) for at, sample in samples if (rss := sample.value("runner.rss_bytes")) is not None
    ]
    if len(readings) < 3:
        return None, None, "runner memory: too few readings of the runner's resident memory"
    levelled = levelled_at(readings)
    starts = [s for s in (warm_up_s, levelled) if s is not None]
    start = min(starts) if starts else readings[-1][0]
    points = [(at / 3600.0, rss) for at, rss in readings if at >= start]
    if len(points) < 3 or readings[-1][0] - start < MEMORY_SPAN_S:
        return (
            None,
            None,
            (
                "runner memory: undecided (it is fitted after the warm-up, "
                f"{format_duration(start)}); soak at least {format_duration(_whole_minutes(start))}"
            ),
        )
    slope = trend(points, confidence)
    if slope is None or slope.low is None or slope.low <= 0:
        return slope, None, None
    last = samples[-1][1]
    share, total = last.value("host.free_share"), last.value("host.total_bytes")
    if share is None or total is None:
        return slope, None, "runner memory grows, but free memory is not known"
    free = share * total
    if slope.low * HOURS_TO_EXHAUST > free:
        problem = (
            f"runner memory grows {slope.low / 1e6:.0f}–{(slope.high or slope.low) / 1e6:.0f} "
            f"MB/h after its warm-up: the {free / 1e9:.1f} GB free would be used up within a day"
        )
        return slope, problem, None
    return slope, None, None


def _as_throughput_went(fell: bool, steady: bool, if_fell: _T, if_steady: _T, otherwise: _T) -> _T:
    """What to say by whether the soak's throughput fell below the floor, held above it, or
    stays undecided (its interval straddles the floor, or too few windows to tell)."""
    if fell:
        return if_fell
    return if_steady if steady else otherwise


def judge_soak(
    spans: Sequence[SoakSpan],
    samples: Sequence[tuple[float, ReadingSample]],
    bounds: Bounds,
    window_s: float,
    budget_bytes: float | None = None,
    warm_up_s: float | None = 0.0,
) -> SoakJudgement:
    """`samples`: each tick's readings with its place in the soak's measured time (s).
    `warm_up_s`: when the first pass over the corpus ended (None: unknown)."""
    windows = windows_of(spans, window_s)
    breaks, unjudged = breaks_over_time(samples, reading_bounds_of(bounds, budget_bytes))
    breaks = (*breaks, *swap_out_breaks(samples, bounds.swap_floor_mb_per_min))
    rss_trend, memory_problem, memory_unjudged = _memory(samples, bounds.confidence, warm_up_s)
    if memory_unjudged:
        unjudged = (*unjudged, memory_unjudged)
    throttles = _throttles(samples)
    reasons: list[str] = []
    ratio: tuple[float, float, float] | None = None
    slope: Trend | None = None
    fell = False
    steady = False
    if len(windows) >= 2 and windows[0].throughput > 0:
        first, last = windows[0], windows[-1]
        interval = ratio_interval(last.estimate, first.estimate, bounds.confidence)
        point = last.throughput / first.throughput
        if not (first.estimate.has_interval and last.estimate.has_interval):
            reasons.append(
                f"throughput undecided: the first and last windows ({first.units} and "
                f"{last.units} units) are too few for an interval; soak longer"
            )
        elif interval is not None:
            ratio = (point, interval[0], interval[1])
            floor = 1.0 - bounds.min_gain
            fell = interval[1] < floor
            steady = interval[0] >= floor
            said = f"last window at {point:.0%} of the first ({interval[0]:.0%}–{interval[1]:.0%})"
            reasons.append(
                _as_throughput_went(
                    fell,
                    steady,
                    f"throughput fell: {said}, below {floor:.0%}",
                    f"throughput held: {said}",
                    f"throughput undecided: {said} straddles {floor:.0%}",
                )
            )
        points = [((w.at_s + w.length_s / 2) / 3600.0, w.throughput / first.throughput)
                  for w in windows]  # fmt: skip
        slope = trend(points, bounds.confidence)
    else:
        reasons.append(f"fewer than two whole windows of {window_s:g} s were measured")
    throttle_cost: str | None = None
    if throttles:
        throttle_cost = _as_throughput_went(fell, steady, "likely", "none", None)
        named = "; ".join(throttles)
        reasons.append(
            _as_throughput_went(
                fell,
                steady,
                f"throttled ({named}), the likely cause",
                f"throttled ({named}) without costing throughput",
                f"throttled ({named})",
            )
        )
    if memory_problem:
        reasons.append(memory_problem)
    busy = [v for _at, s in samples if (v := s.value("production.busy")) is not None]
    if busy and any(busy):
        share = sum(busy) / len(busy)
        reasons.append(
            f"production held a model in {share:.0%} of the ticks: its work shared the machine "
            "with the soak's windows"
        )
    for broken in breaks:
        reasons.append(f"bound broken at {broken.at_s:.0f} s: {broken.text}")
    if breaks:
        verdict = BROKE
    elif fell or memory_problem:
        verdict = DRIFTED
    elif steady:
        verdict = HOLDS
    else:
        verdict = INCONCLUSIVE
    return SoakJudgement(
        verdict, tuple(reasons), tuple(windows), ratio, slope, rss_trend,
        tuple(throttles), throttle_cost, tuple(breaks), tuple(unjudged),
    )  # fmt: skip
