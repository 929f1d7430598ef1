"""Whether a sweep's first one-slot step can stand as evidence at all.

The first one-slot run is the floor every later step is held against. If the runner failed
turns there — other than refusing prompts longer than the window, which any runner must — the
failure is the client's or the runner's, not the device's capacity: whatever the sweep went on
to measure would be recorded as this device's evidence although it cannot be true. And a corpus
whose turns are mostly too long for the window measures little but refusals.
"""

from __future__ import annotations

from ....interfaces.turns import REFUSED_OVER_WINDOW
from ..records import StepRecord
from .fidelity import first_answers

# More than this share of the corpus refused as over the window: the corpus does not fit.
MAX_OVER_WINDOW_SHARE = 0.25


def untrustworthy_floor(
    step: StepRecord, corpus_turns: int, *, refusals_expected: bool = False
) -> str | None:
    """Why the first one-slot step cannot be evidence (one line), or None when it can.

    Judged on each corpus turn's first answer: a steady-state step replays turns again, and a
    turn is counted once however often it was sent. `refusals_expected` (the split-window
    what-if) lets any share of the corpus be refused as over the window: that is its question."""
    answers = first_answers(step)
    failed = [
        (turn_id, result)
        for turn_id, result in answers.items()
        if not result.served and result.error != REFUSED_OVER_WINDOW
    ]
    if failed:
        turn_id, result = failed[0]
        return (
            f"the first one-slot step failed {len(failed)} of {len(answers)} turns "
            f"(first: {turn_id}: {result.error or 'no answer'}); "
            "nothing is recorded — the runner or its client is at fault, not the device"
        )
    refused = sum(1 for r in answers.values() if r.error == REFUSED_OVER_WINDOW)
    total = corpus_turns or len(answers)
    if total and refused > MAX_OVER_WINDOW_SHARE * total and not refusals_expected:
        return (
            f"the corpus does not fit this window: {refused} of {total} turns were refused as "
            f"longer than the {step.window}-token window at one slot (at most "
            f"{MAX_OVER_WINDOW_SHARE:.0%} may be); use a larger --window or a corpus drawn for it"
        )
    return None
