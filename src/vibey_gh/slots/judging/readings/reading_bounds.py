"""Bounds over readings, tick by tick: each names the readings it needs (pure: no I/O).

A `ReadingBound` says which readings it reads (`needs`: names, `*` standing for a GPU or zone
number) and what broke in one tick, if anything. A tick that lacks every reading a bound needs
leaves the bound unjudged, with the readings' own reasons: never a silent pass.

Adding a bound on a new reading is: the sampler that reads it (`platforms.sensors`), a class
here with `needs` and `broken`, and its place in `reading_bounds_of`; the soak's report lists
breaks and unjudged bounds by name already.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

import msgspec

from ....interfaces.bounds import Bounds
from ....interfaces.readings import ReadingSample

MB = 1_000_000


class ReadingBound(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def needs(self) -> tuple[str, ...]: ...

    def broken(self, sample: ReadingSample) -> str | None:
        """What broke in this tick, in words; None when inside the bound."""
        ...


class BoundBreak(msgspec.Struct, frozen=True):
    at_s: float
    bound: str
    text: str


def matching(sample: ReadingSample, pattern: str) -> list[str]:
    """The readings of `sample` a need names (`*`: any number)."""
    if "*" not in pattern:
        return [pattern] if pattern in sample.readings else []
    regex = re.compile(re.escape(pattern).replace(r"\*", r"\d+"))
    return [name for name in sample.names() if regex.fullmatch(name)]


def read_any(sample: ReadingSample, needs: Sequence[str]) -> list[tuple[str, float]]:
    """(name, value) of every reading a bound needs that this tick has a value for."""
    out = []
    for pattern in needs:
        for name in matching(sample, pattern):
            value = sample.value(name)
            if value is not None:
                out.append((name, value))
    return out


class WiredCeiling(msgspec.Struct, frozen=True):
    """Wired memory (production's part left out where it is known) under `wired_ceiling` of
    the memory budget: the step bound of design §5, held at every tick of a soak."""

    ceiling: float
    budget_bytes: float | None = None
    name: str = "wired_ceiling"
    needs: tuple[str, ...] = ("charged.wired_bytes", "host.wired_bytes", "host.total_bytes")

    def broken(self, sample: ReadingSample) -> str | None:
        wired = sample.value("charged.wired_bytes")
        if wired is None:
            wired = sample.value("host.wired_bytes")
        budget = self.budget_bytes or sample.value("host.total_bytes")
        if wired is None or not budget:
            return None
        limit = self.ceiling * budget
        if wired > limit:
            return f"wired {wired / 1e9:.2f} GB over the ceiling {limit / 1e9:.2f} GB"
        return None


def reading_bounds_of(bounds: Bounds, budget_bytes: float | None = None) -> list[ReadingBound]:
    """The bounds a soak holds at every tick."""
    return [WiredCeiling(bounds.wired_ceiling, budget_bytes)]


def _unjudged_reason(sample: ReadingSample, bound: ReadingBound) -> str:
    reasons: list[str] = []
    for pattern in bound.needs:
        names = matching(sample, pattern) or [pattern]
        reasons.extend(f"{name}: {sample.why_missing(name)}" for name in names)
    return f"{bound.name} not judged ({'; '.join(reasons)})"


def breaks_over_time(
    samples: Sequence[tuple[float, ReadingSample]], bounds: Sequence[ReadingBound]
) -> tuple[tuple[BoundBreak, ...], tuple[str, ...]]:
    """The first break of each bound over the ticks, and the bounds no tick could judge."""
    breaks: list[BoundBreak] = []
    unjudged: list[str] = []
    for bound in bounds:
        judged = False
        for at, sample in samples:
            if not read_any(sample, bound.needs):
                continue
            judged = True
            text = bound.broken(sample)
            if text is not None:
                breaks.append(BoundBreak(at, bound.name, text))
                break
        if not judged and samples:
            unjudged.append(_unjudged_reason(samples[-1][1], bound))
    return tuple(breaks), tuple(unjudged)


def swap_out_breaks(
    samples: Sequence[tuple[float, ReadingSample]], floor_mb_per_min: float, span_s: float = 60.0
) -> tuple[BoundBreak, ...]:
    """Swapping out faster than `floor_mb_per_min` over any minute (the counters are
    cumulative; a counter that went back, after a reboot, starts over)."""
    points = [(at, v) for at, s in samples if (v := s.value("swap.out_bytes")) is not None]
    anchor = 0
    for at, value in points:
        while points[anchor][0] < at - span_s or points[anchor][1] > value:
            anchor += 1
        start_at, start_value = points[anchor]
        if at - start_at >= span_s / 2:
            rate = (value - start_value) / MB / ((at - start_at) / 60.0)
            if rate > floor_mb_per_min:
                text = f"swapping out {rate:.0f} MB/min, above {floor_mb_per_min:g} MB/min"
                return (BoundBreak(at, "swap_floor_mb_per_min", text),)
    return ()
