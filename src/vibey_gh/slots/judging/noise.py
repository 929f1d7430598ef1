"""Whether a sweep decided anything: steps too noisy to measure read as such, not as gains.

A sweep whose multi-slot steps all straddle `min_gain` (or held too few turns for an
interval) answers 1 — the safe answer — but not because one slot was shown to be best: the
noise hid any gain there was. That is said in one sentence, with what would decide it
(longer steps, a quieter machine), and as a reason code scripts can branch on. No point
estimate without its interval is printed: "+59%" alone reads as a finding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import msgspec

from .bounds import Bounds
from .figures import StepMetrics


class Verdict(Protocol):
    """What these rules read of a step's verdict (`judge.Verdict`; judge imports this module)."""

    @property
    def slots(self) -> int: ...
    @property
    def qualifies(self) -> bool: ...
    @property
    def inside_bounds(self) -> bool: ...
    @property
    def inconclusive(self) -> bool: ...
    @property
    def metrics(self) -> StepMetrics: ...
    @property
    def turns_per_hour_low(self) -> float: ...
    @property
    def turns_per_hour_high(self) -> float: ...
    @property
    def confidence(self) -> float | None: ...


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
    undecided = tuple(v.slots for v in multi if v.inside_bounds and v.inconclusive)
    if not undecided:
        return Decidability(NO_GAIN, one_slot_noise=noise)
    return Decidability(TOO_NOISY, too_noisy_sentence(undecided, noise, bounds), undecided, noise)


def too_noisy_sentence(undecided: Sequence[int], noise: float | None, bounds: Bounds) -> str:
    steps = ", ".join(f"N={n}" for n in undecided)
    measured = f" (one slot alone varied ±{noise:.0%})" if noise is not None and noise > 0 else ""
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
    "decidability",
    "one_slot_noise",
    "relative_half_width",
    "too_noisy_sentence",
]
