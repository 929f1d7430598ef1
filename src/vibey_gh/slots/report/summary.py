"""The Markdown summary written beside every evidence file."""

from __future__ import annotations

import time

from ..evidence.store import Evidence
from ..judging.bounds import Bounds
from ..judging.judge import judge_sweep
from .step_table import markdown_table, step_rows


def render_summary(evidence: Evidence, bounds: Bounds) -> str:
    data = evidence.data
    judgement = judge_sweep(evidence.steps, bounds)
    fields = evidence.fingerprint_fields
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(evidence.created_at))
    lines = [
        f"# Slots evidence {evidence.fingerprint}",
        "",
        f"Measured {when}: {fields.get('hardware_model') or 'unknown model'}, "
        f"{fields.get('processor') or 'unknown processor'}, {fields.get('os_name')} "
        f"{fields.get('os_version')}; runner {fields.get('runner_kind')} "
        f"{fields.get('runner_version')}; window {fields.get('window')}.",
        "",
        f"**Ideal: {judgement.ideal}.** {judgement.reason}.",
        "",
        markdown_table(step_rows(evidence.steps, judgement)),
        "",
        f"Corpus {data['corpus']['sha256'][:16]}… ({data['corpus']['turns']} turns in "
        f"{data['corpus']['segments']} segments); stop: {data['decision'].get('stop_reason')}.",
    ]
    for note in data.get("notes") or []:
        lines += ["", f"> {note}"]
    return "\n".join(lines) + "\n"
