"""The planned sequential test: when a step may stop, and how wide its interval is then.

A step is looked at only at planned times (`look_times`: every `min_step_seconds`, five of them
at most, evenly spaced to `max_step_seconds`; past a cap a latency bound lengthened, each look
twice the last) — not at every segment boundary: each look is one more
chance for noise to decide, and looking whenever a turn ends turned a 0.5% chance of
qualifying a +10% step into 5.5%. Each look spends a share of the error the confidence allows
(1 − confidence): every look before the last spends a quarter of it in equal parts, the last
look the rest (an error-spending rule in the manner of Haybittle and Peto: early looks stop
only on a clear answer, and a step measured to the cap is judged at nearly the confidence
asked). A step's interval is then the interval at its look's share (`look_confidence`); by
the union bound the chance that any look of a step misleads is at most 1 − confidence, however
many looks it took.

An interleaved step looks once more, first, at half the minimum (`INTERLEAVED_FIRST_LOOK`),
where its blocks are short enough for the pairs an interval needs to close by then: the
minimum is a minute of the machine so that a step's window spans its minute-to-minute wander,
and an interleaved step's pairs of blocks, seconds apart, cancel that wander instead
(`judging.interleaved`). Its later looks are the ones every step has.
"""

from __future__ import annotations

import math

from .paired import MIN_PAIRS
from .stats import normal_quantile

MAX_LOOKS = 5
INTERIM_SHARE = 0.25  # of the error, spent over the looks before the last
# an interleaved step's first look, as a share of `min_step_seconds`: on the simulated sweeps
# of fast turns its knee-4 runner time went from 59% to ≈31% of the stepped sweeps', the knee
# found as often; on the real demo a step's first pair of blocks read its gain 1.6% ± 2.5%
# above the later pairs' (docs/performance.md, "Interleaved steps look first at half the
# minimum")
INTERLEAVED_FIRST_LOOK = 0.5


def evenly_spaced_looks(min_seconds: float, max_seconds: float) -> int:
    """How many looks come evenly spaced: one per `min_step_seconds` up to the cap, at most 5."""
    if min_seconds <= 0 or max_seconds <= min_seconds:
        return 1
    return max(1, min(MAX_LOOKS, math.floor(max_seconds / min_seconds + 1e-9)))


def first_look(min_seconds: float, block_seconds: float | None) -> float | None:
    """An interleaved step's look before `min_seconds`, where blocks `block_seconds` long
    close the pairs its interval needs (`paired.MIN_PAIRS`) by then; None: first looked at at
    the minimum (a step that does not interleave, or one whose blocks are too long for an
    interval by then: a look that cannot decide would only spend error)."""
    if block_seconds is None:
        return None
    sooner = INTERLEAVED_FIRST_LOOK * min_seconds
    return sooner if 2 * MIN_PAIRS * block_seconds <= sooner else None


def look_times(
    min_seconds: float,
    max_seconds: float,
    even_until: float | None = None,
    first: float | None = None,
) -> list[float]:
    """Seconds of measurement window at which a step is looked at: evenly spaced up to
    `even_until` (None: the cap), then each twice the last; the last at the cap, none before
    `min_seconds` but `first` (`first_look`: an interleaved step's). A cap a latency bound
    lengthened (`config.LATENCY_CAP_FACTOR`) so keeps the looks the ordinary cap has, which a
    step that decides soon stops at, and spends few looks on its long tail."""
    even_end = max_seconds if even_until is None else min(max_seconds, even_until)
    looks = evenly_spaced_looks(min_seconds, even_end)
    times = [max(min_seconds, even_end * j / looks) for j in range(1, looks + 1)]
    while times[-1] < max_seconds * (1 - 1e-9):
        times.append(min(max_seconds, 2.0 * times[-1]))
    if first is not None and 0 < first < times[0]:
        times.insert(0, first)
    return times


def look_confidence(confidence: float, look: int, looks: int) -> float:
    """The two-sided confidence of look `look` (1-based) of `looks`: the share of the error
    1 − confidence that look spends. A step not measured with planned looks (0) keeps
    `confidence`."""
    if look <= 0 or looks <= 1:
        return confidence
    error = 1.0 - confidence
    if look < looks:
        return 1.0 - error * INTERIM_SHARE / (looks - 1)
    return 1.0 - error * (1.0 - INTERIM_SHARE)


def widening(confidence: float, look: int, looks: int) -> float:
    """How much wider the look's interval is than one at `confidence` (normal quantiles)."""
    spent = look_confidence(confidence, look, looks)
    if spent == confidence:
        return 1.0
    return normal_quantile(0.5 + spent / 2.0) / normal_quantile(0.5 + confidence / 2.0)
