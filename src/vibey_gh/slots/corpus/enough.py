"""Whether a whole-run corpus holds enough runs for a run-level estimate, said before a sweep.

A corpus of whole runs is decided on runs per hour: each step must see runs complete, and a
corpus with few runs replays the same few over and over, so the step's figure is the spread of
a handful of runs, not of the work. The rule, kept here alone so it can follow the estimator:
a sweep up to N slots wants at least `RUNS_PER_SLOT` × N distinct runs — every worker of the
widest step starts a run of its own, and each has another to go on to.
"""

from __future__ import annotations

from .turns import Segment

RUNS_PER_SLOT = 2
# `slots calibrate`'s own default --max-slots (as slots.judging.sweep's)
DEFAULT_MAX_SLOTS = 16


def runs_needed(max_slots: int) -> int:
    return RUNS_PER_SLOT * max_slots


def too_few_runs(
    segments: tuple[Segment, ...], whole_runs: bool, max_slots: int = DEFAULT_MAX_SLOTS
) -> str | None:
    """One line naming the shortfall and what would make it enough; None when enough (or
    when the corpus is of segments, decided on turns)."""
    if not whole_runs:
        return None
    runs = len({segment.run_id for segment in segments})
    needed = runs_needed(max_slots)
    if runs >= needed:
        return None
    return (
        f"too few runs for a run-level estimate: {runs} whole run(s), and a sweep up to "
        f"{max_slots} slots wants at least {needed} ({RUNS_PER_SLOT} a slot): add "
        f"{needed - runs} more runs (sessions, lanes, traces; `vibey-gh slots corpus "
        f"--segments-per-stratum N`), draw segments (`vibey-gh slots corpus --shape segments`, "
        f"decided on turns), or sweep fewer slots with longer steps (`vibey-gh slots calibrate "
        f"--max-slots {max(1, runs // RUNS_PER_SLOT)} --max-step-seconds S`)"
    )
