"""The renderers as a test calls them on a saved sweep: judged once against `bounds`, as the
commands do (`slots show` through `gate.judged`), then rendered with that judgement."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.evidence.store import Evidence
from vibey_gh.slots.gate.judged import judge_evidence
from vibey_gh.slots.report.documents.html import render_html, write_html_report
from vibey_gh.slots.report.documents.markdown import render_report, write_report
from vibey_gh.slots.report.summary import render_summary


def report_of(
    evidence: Evidence, bounds: Bounds, plots: Mapping[str, str] | None = None, **options: Any
) -> str:
    judged = judge_evidence(evidence, bounds)
    return render_report(evidence, bounds, plots, judgement=judged.judgement, **options)


def summary_of(evidence: Evidence, bounds: Bounds) -> str:
    return render_summary(evidence, bounds, judge_evidence(evidence, bounds).judgement)


def html_of(evidence: Evidence, bounds: Bounds, plots: Mapping[str, bytes]) -> str:
    return render_html(
        evidence, bounds, plots, judgement=judge_evidence(evidence, bounds).judgement
    )


def write_report_of(
    evidence: Evidence, bounds: Bounds, folder: Path, stem: str, **options: Any
) -> list[Path]:
    judgement = judge_evidence(evidence, bounds).judgement
    return write_report(evidence, bounds, folder, stem, judgement=judgement, **options)


def write_html_of(evidence: Evidence, bounds: Bounds, path: Path, **options: Any) -> Path:
    judgement = judge_evidence(evidence, bounds).judgement
    return write_html_report(evidence, bounds, path, judgement=judgement, **options)
