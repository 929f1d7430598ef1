"""Whether a sweep's first one-slot step can stand as evidence at all.

The first one-slot run is the floor every later step is held against. If the runner failed
turns there — other than refusing prompts longer than the window, which any runner must — the
failure is the client's or the runner's, not the device's capacity: whatever the sweep went on
to measure would be recorded as this device's evidence although it cannot be true. And a corpus
whose turns are mostly too long for the window measures little but refusals.
"""

from __future__ import annotations

from ..interfaces.turns import REFUSED_OVER_WINDOW
from .records import StepRecord

# More than this share of the corpus refused as over the window: the corpus does not fit.
MAX_OVER_WINDOW_SHARE = 0.25


def untrustworthy_floor(step: StepRecord, corpus_turns: int) -> str | None:
    """Why the first one-slot step cannot be evidence (one line), or None when it can."""
    failed = [
        t for t in step.turns if not t.result.served and t.result.error != REFUSED_OVER_WINDOW
    ]
    if failed:
        first = failed[0]
        return (
            f"the first one-slot step failed {len(failed)} of {len(step.turns)} turns "
            f"(first: {first.turn_id}: {first.result.error or 'no answer'}); "
            "nothing is recorded — the runner or its client is at fault, not the device"
        )
    refused = sum(1 for t in step.turns if t.result.error == REFUSED_OVER_WINDOW)
    total = corpus_turns or len(step.turns)
    if total and refused > MAX_OVER_WINDOW_SHARE * total:
        return (
            f"the corpus does not fit this window: {refused} of {total} turns were refused as "
            f"longer than the {step.window}-token window at one slot (at most "
            f"{MAX_OVER_WINDOW_SHARE:.0%} may be); use a larger --window or a corpus drawn for it"
        )
    return None
