"""The Markdown summary written beside every evidence file."""

from __future__ import annotations

import time

from ...interfaces.bounds import Bounds
from ..evidence.store import Evidence
from ..judging.judge import SweepJudgement
from .tables.latency_table import LATENCY_COLUMNS, latency_lines, latency_rows
from .tables.split_window import prefix_cache_lines, split_window_section
from .tables.step_table import columns_for, markdown_table, step_rows

# why a sweep ended when it simply ran out of steps to take (judging.sweep)
RAN_OUT = ("reached the largest slot count to try", "every requested step was measured")


def more_slots_line(ideal: int, largest_tried: int, stop_reason: str | None) -> str | None:
    """When the ideal N is the largest N the sweep tried and it stopped only because it ran
    out of steps: more slots might pay, and how to measure them; None otherwise."""
    if ideal <= 1 or ideal < largest_tried or not (stop_reason or "").startswith(RAN_OUT):
        return None
    more = 2 * largest_tried
    return (
        f"the ideal N is the largest N tried ({largest_tried}): more slots might pay; "
        f"`vibey-gh slots calibrate --corpus FILE --max-slots {more}` measures further (for "
        f"the demo, `vibey-gh slots calibrate --demo --max-slots {more}`)"
    )


def render_summary(evidence: Evidence, bounds: Bounds, judgement: SweepJudgement) -> str:
    """The summary; `judgement` is the sweep as already judged against `bounds`."""
    document = evidence.document
    on = evidence.measured_on
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(evidence.created_at))
    lines = [
        f"# Slots evidence {evidence.fingerprint}",
        "",
        f"Measured {when}: {on.hardware_model or 'unknown model'}, "
        f"{on.processor or 'unknown processor'}, {on.os}; runner {on.runner}; "
        f"window {on.window}.",
        "",
        f"**Ideal: {judgement.ideal}.** {judgement.reason}.",
        "",
        markdown_table(step_rows(evidence.steps, judgement), columns_for(judgement)),
        "",
        markdown_table(latency_rows(judgement, bounds.confidence), LATENCY_COLUMNS),
        *(f"\n{line}." for line in latency_lines(judgement, bounds)),
        "",
        f"Decided on {judgement.figures.decided_by}. "
        f"Corpus {str(document.corpus.get('sha256'))[:16]}… ({document.corpus.get('turns')} "
        f"turns in {document.corpus.get('segments')} "
        f"{'whole runs' if document.corpus.get('shape') == 'runs' else 'segments'}); "
        f"stop: {document.decision.stop_reason if document.decision else None}.",
    ]
    what_if = split_window_section(evidence, judgement)
    if what_if:
        lines += ["", *what_if]
    cache = prefix_cache_lines(evidence, judgement)
    if cache:
        lines += ["", *cache]
    for note in document.notes:
        lines += ["", f"> {note}"]
    return "\n".join(lines) + "\n"
