"""How one step fares against the bounds (`Verdict`, which `judge` reaches), and whether a
sweep's verdicts decided anything: steps too noisy to measure read as such, not as gains.

A sweep whose multi-slot steps all straddle `min_gain` (or held too few turns for an
interval) answers 1 — the safe answer — but not because one slot was shown to be best: the
noise hid any gain there was. That is said in one sentence, with what would decide it
(longer steps, a quieter machine), and as a reason code scripts can branch on. No point
estimate without its interval is printed: "+59%" alone reads as a finding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, TypedDict

import msgspec

from ...interfaces.bounds import Bounds
from ...interfaces.schema import as_json
from .figures import Agreement, StepMetrics
from .latencies.latency_figures import LatencyFigures


def finite_or_none(value: float) -> float | None:
    """An interval's end for JSON: an unbounded one (too few turns to tell) is null, since JSON
    has no infinity and the evidence reader refuses non-finite numbers."""
    return value if math.isfinite(value) else None


class VerdictJson(TypedDict, total=False):
    """A verdict as evidence records it (`Verdict.to_json`): kept for readers of the file,
    since the tool re-judges the recorded steps; an older file holds fewer keys."""

    index: int
    slots: int
    label: str
    inside_bounds: bool
    qualifies: bool
    broken: list[str]
    warnings: list[str]
    gain: float | None
    gain_low: float | None
    gain_high: float | None
    turns_per_hour_low: float
    turns_per_hour_high: float | None
    confidence: float | None
    decided_by: str
    runs_per_hour_low: float | None
    runs_per_hour_high: float | None
    agreement: dict[str, object] | None
    metrics: dict[str, object]
    latency: dict[str, object] | None


class Verdict(msgspec.Struct, frozen=True):
    """How one step fares against the bounds.

    label: "floor" (first one-slot run), "baseline" (second), "drift check" (a one-slot run
      closing the sweep), "qualifies", "no gain",
      "inconclusive", or "breaks <first bound>".
    broken: every broken bound, as a phrase. warnings: what is reported but not refusing
      (memory at one slot). gain: throughput over the best one-slot run, minus 1.
    gain_low / gain_high: the gain's interval at `confidence`: the ratio of the step's throughput
      to that same bar, with the noise of both (`gain_ratio`; the point gain when neither was
      measured with an interval).
      Inside every bound, a step qualifies when gain_low ≥ min_gain, gains nothing when
      gain_high < min_gain, and is inconclusive in between.
    turns_per_hour_low / turns_per_hour_high: the turns per hour's interval at `confidence`.
    runs_per_hour_low / runs_per_hour_high: the runs per hour's, for a corpus of whole runs
      (None otherwise). The verdict is taken on `metrics.decided_by`; `rate_low`/`rate_high`
      are that figure's interval.
    latency: the step's TTFT, ITL and turn latency figures (None in figures made before).
    """

    index: int
    slots: int
    label: str
    inside_bounds: bool
    qualifies: bool
    broken: tuple[str, ...]
    warnings: tuple[str, ...]
    gain: float | None
    agreement: Agreement | None
    metrics: StepMetrics
    gain_low: float | None = None
    gain_high: float | None = None
    turns_per_hour_low: float = 0.0
    turns_per_hour_high: float = 0.0
    confidence: float | None = None
    runs_per_hour_low: float | None = None
    runs_per_hour_high: float | None = None
    latency: LatencyFigures | None = None

    @property
    def inconclusive(self) -> bool:
        return self.label == "inconclusive"

    @property
    def decided_by(self) -> str:
        return self.metrics.decided_by

    @property
    def rate_low(self) -> float:
        low = self.runs_per_hour_low if self.metrics.on_runs else self.turns_per_hour_low
        return low or 0.0

    @property
    def rate_high(self) -> float:
        high = self.runs_per_hour_high if self.metrics.on_runs else self.turns_per_hour_high
        return math.inf if high is None else high

    # By hand: the verdict as the evidence records it (`VerdictJson`), its figures computed
    # from the judgement (infinite bounds written as null); never read back as a Verdict.
    def to_json(self) -> VerdictJson:
        return {
            "index": self.index,
            "slots": self.slots,
            "label": self.label,
            "inside_bounds": self.inside_bounds,
            "qualifies": self.qualifies,
            "broken": list(self.broken),
            "warnings": list(self.warnings),
            "gain": self.gain,
            "gain_low": self.gain_low,
            "gain_high": self.gain_high,
            "turns_per_hour_low": self.turns_per_hour_low,
            "turns_per_hour_high": finite_or_none(self.turns_per_hour_high),
            "confidence": self.confidence,
            "decided_by": self.decided_by,
            "runs_per_hour_low": self.runs_per_hour_low,
            "runs_per_hour_high": None
            if self.runs_per_hour_high is None
            else finite_or_none(self.runs_per_hour_high),
            "agreement": as_json(self.agreement) if self.agreement else None,
            "metrics": as_json(self.metrics),
            "latency": as_json(self.latency) if self.latency else None,
        }


class Judgement(Protocol):
    @property
    def verdicts(self) -> Sequence[Verdict]: ...
    @property
    def ideal(self) -> int: ...


# Reason codes of a sweep's answer (`--json` `verdict_code`).
MEASURED_GAIN = "measured_gain"  # a step beat one slot inside every bound
NO_GAIN = "no_gain"  # every larger N was shown to gain too little, or broke a bound
TOO_NOISY = "too_noisy"  # some larger N could not be told from one slot: the noise decided
ONE_SLOT_ONLY = "one_slot_only"  # nothing above one slot was measured
NO_ONE_SLOT_RUN = "no_one_slot_run"  # nothing to compare with
VERDICT_CODES = (MEASURED_GAIN, NO_GAIN, TOO_NOISY, ONE_SLOT_ONLY, NO_ONE_SLOT_RUN)


class Decidability(msgspec.Struct, frozen=True):
    """What the sweep's answer rests on: `code` (one of VERDICT_CODES) and, when the noise
    decided, a sentence naming the undecided steps, the one-slot noise and what would decide."""

    code: str
    sentence: str | None = None
    undecided: tuple[int, ...] = ()
    one_slot_noise: float | None = None


def relative_half_width(verdict: Verdict) -> float | None:
    """How far a step's throughput interval reaches either side of its point, as a share
    (0.7 for ±70%); None without an interval (or an unbounded one)."""
    point = verdict.metrics.turns_per_hour
    low, high = verdict.turns_per_hour_low, verdict.turns_per_hour_high
    if verdict.confidence is None or point <= 0 or not math.isfinite(high):
        return None
    return (high - low) / 2 / point


def one_slot_noise(verdicts: Sequence[Verdict]) -> float | None:
    """The larger of: the widest one-slot interval's half width, and the spread between the
    one-slot runs (relative to the better one). None with no one-slot run."""
    ones = [v for v in verdicts if v.slots == 1]
    if not ones:
        return None
    widths = [w for w in map(relative_half_width, ones) if w is not None]
    points = [v.metrics.turns_per_hour for v in ones]
    spread = (max(points) - min(points)) / max(points) if len(points) > 1 and max(points) else 0.0
    return max([spread, *widths])


def decidability(judgement: Judgement, bounds: Bounds) -> Decidability:
    verdicts = judgement.verdicts
    noise = one_slot_noise(verdicts)
    if any(v.qualifies for v in verdicts) and judgement.ideal > 1:
        return Decidability(MEASURED_GAIN, one_slot_noise=noise)
    if not any(v.slots == 1 for v in verdicts):
        return Decidability(NO_ONE_SLOT_RUN)
    multi = [v for v in verdicts if v.slots > 1]
    if not multi:
        return Decidability(ONE_SLOT_ONLY, one_slot_noise=noise)
    open_steps = [v for v in multi if v.inside_bounds and v.inconclusive]
    if not open_steps:
        return Decidability(NO_GAIN, one_slot_noise=noise)
    undecided = tuple(v.slots for v in open_steps)
    own = all(v.metrics.gain_over_own_blocks for v in open_steps)
    sentence = too_noisy_sentence(undecided, noise, bounds, own)
    return Decidability(TOO_NOISY, sentence, undecided, noise)


def too_noisy_sentence(
    undecided: Sequence[int], noise: float | None, bounds: Bounds, own_blocks: bool = False
) -> str:
    """Why the answer stays 1 where steps were inconclusive, and what would decide them.
    own_blocks: every undecided step was read against its own one-slot blocks, so how far
    the sweep's one-slot runs strayed from each other is no part of its doubt: its pairs'."""
    steps = ", ".join(f"N={n}" for n in undecided)
    measured = f" (one slot alone varied ±{noise:.0%})" if noise is not None and noise > 0 else ""
    if own_blocks:
        measured = " (its pairs of one-slot and N-slot blocks disagreed)"
    return (
        f"The steps were too noisy to decide{measured}: {steps} could not be told from one "
        f"slot at the {bounds.min_gain:.0%} gain needed, so the answer stays 1, the safe one. "
        "To decide it, measure longer steps (raise --min-step-seconds and --max-step-seconds) "
        "while nothing else heavy runs, and rerun with --restart."
    )


__all__ = [
    "MEASURED_GAIN",
    "NO_GAIN",
    "NO_ONE_SLOT_RUN",
    "ONE_SLOT_ONLY",
    "TOO_NOISY",
    "VERDICT_CODES",
    "Decidability",
    "Judgement",
    "Verdict",
    "VerdictJson",
    "decidability",
    "finite_or_none",
    "one_slot_noise",
    "relative_half_width",
    "too_noisy_sentence",
]
