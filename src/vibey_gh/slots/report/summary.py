"""The Markdown summary written beside every evidence file."""

from __future__ import annotations

import time

from ..evidence.store import Evidence
from ..judging.bounds import Bounds
from ..judging.judge import SweepJudgement
from .tables.latency_table import LATENCY_COLUMNS, latency_lines, latency_rows
from .tables.split_window import prefix_cache_lines, split_window_section
from .tables.step_table import columns_for, markdown_table, step_rows


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
