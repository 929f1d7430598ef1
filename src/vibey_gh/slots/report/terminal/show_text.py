"""`slots show` in words: the evidence on a console (rich's table fitted to its width, or
Markdown), as CSV, as an HTML page, and the sweeps and soaks a newer one replaced."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Mapping
from pathlib import Path

from rich.console import Console

from ....errors import BadInput, EvidenceError
from ....interfaces.bounds import Bounds
from ....interfaces.schema import as_json
from ...evidence.history import PastSweep
from ...evidence.soak_file import SoakRecord
from ...evidence.soak_history import describe_soak, kept_soaks
from ...gate.allowed import AllowedDeps
from ...judging.judge import gain_range
from ...judging.truth.reported import describe as describe_reported
from ..documents.html import write_html_report
from ..show import ShowAnswer, ShownEvidence, gather_history
from ..soak_view import lines as soak_lines
from ..summary import more_slots_line
from ..tables.latency_table import latency_step_lines
from ..tables.split_window import prefix_cache_lines
from ..tables.step_table import (
    columns_for,
    inconclusive_sentence,
    markdown_table,
    shown_label,
    step_views,
)
from .consoles import markdown_console
from .step_table_view import fitting_table, left_out_line

KeptSoaks = Mapping[str, list[tuple[Path, SoakRecord | str]]]


def no_evidence_to_write(kind: str) -> str:
    """What to do when there is no evidence to write as `kind`: measure, or name other."""
    return (
        f"no evidence to write as {kind}: `vibey-gh slots calibrate` records it for this "
        "device, or name other evidence by its FINGERPRINT (`vibey-gh slots show` lists it)"
    )


def show_asked(
    argument: str | None, option: str | None, as_json: bool, output_format: str | None
) -> tuple[str | None, str]:
    """`slots show`'s fingerprint, given once (as FINGERPRINT or as --fingerprint), and its
    format: json for --json, else --format or the table. --json beside another format is
    refused (BadInput)."""
    if argument and option and argument != option:
        raise BadInput("give the fingerprint once: as FINGERPRINT or as --fingerprint")
    if as_json and output_format not in (None, "json"):
        raise BadInput(f"--json and --format {output_format} ask for two formats; give one")
    return argument or option, "json" if as_json else output_format or "table"


def csv_text(answer: ShowAnswer) -> str:
    """One row per step, numbers as numbers."""
    if answer.shown is None:
        raise EvidenceError(no_evidence_to_write("CSV"))
    rows = answer.shown.steps
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_html(answer: ShowAnswer, bounds: Bounds, path: Path) -> Path:
    if answer.shown is None:
        raise EvidenceError(no_evidence_to_write("HTML"))
    shown = answer.shown
    return write_html_report(shown.evidence, bounds, path, judgement=shown.judgement)


def gather_kept(
    fingerprint: str | None, deps: AllowedDeps
) -> tuple[dict[str, list[PastSweep]], KeptSoaks]:
    """The sweeps and the soaks a newer one replaced, by fingerprint (`show --history`)."""
    kept = gather_history(fingerprint, deps=deps)
    return kept, {fp: kept_soaks(deps.layout, fp) for fp in kept}


def kept_json(kept: Mapping[str, list[PastSweep]], soaks: KeptSoaks) -> dict[str, object]:
    return {
        fp: [as_json(sweep.listed()) for sweep in sweeps]
        + [_kept_soak_json(path, soak) for path, soak in soaks[fp]]
        for fp, sweeps in kept.items()
    }


def kept_lines(kept: Mapping[str, list[PastSweep]], soaks: KeptSoaks) -> list[str]:
    if not any(kept.values()) and not any(soaks.values()):
        return [f"no replaced sweep kept for {', '.join(kept) or 'any fingerprint'}"]
    lines = []
    for fp, sweeps in kept.items():
        lines.append(f"{fp}: {len(sweeps)} replaced sweep(s) kept, newest first")
        for sweep in sweeps:
            steps = f", {sweep.steps} step(s)" if sweep.steps is not None else ""
            lines.append(f"  {sweep.describe()}{steps}: {sweep.path}")
        if soaks[fp]:
            lines.append(f"{fp}: {len(soaks[fp])} soak(s) kept, newest first")
        for path, soak in soaks[fp]:
            said = f"unusable soak file ({soak})" if isinstance(soak, str) else describe_soak(soak)
            lines.append(f"  {said}: {path}")
    return lines


def _kept_soak_json(path: Path, soak: SoakRecord | str) -> dict[str, object]:
    if isinstance(soak, str):
        return {"kind": "soak", "path": str(path), "usable": False, "problem": soak}
    return {
        "kind": "soak",
        "path": str(path),
        "usable": True,
        "slots": soak.slots,
        "created_at": soak.created_at,
        "measured_s": soak.measured_s,
        "complete": soak.data.get("complete") is True,
        "verdict": soak.verdict,
        "described": describe_soak(soak),
    }


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "unknown time"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def render_answer(answer: ShowAnswer, console: Console, *, markdown: bool = False) -> None:
    """Print the answer: rich's table at the console's width, or Markdown (the report's
    table, each other line a paragraph or a list item of its own)."""
    if markdown:
        console = markdown_console(console)
    out = console.print
    if answer.today is None:
        out(f"{answer.today_problem}")
    if answer.shown is not None:
        _render_shown(answer, answer.shown, console, markdown)
    elif answer.asked is not None:
        out(
            f"no evidence for today's fingerprint {answer.asked}: one run at a time until "
            "`vibey-gh slots calibrate` measures this device"
        )
    if answer.others:
        out("")
        out("other evidence in the state dir:")
        for other in answer.others:
            if other.problem:
                detail = f"unreadable: {other.problem}"
            elif other.differences is None:
                detail = "(what differs is unknown without today's fingerprint)"
            else:
                detail = "differs: " + (", ".join(other.differences) or "nothing named")
            out(f"  {other.fingerprint}  measured {_when(other.created_at)}  {detail}")
            out(f"    {other.path}")
    elif answer.shown is None:
        out("no evidence in the state dir")
    for soak in answer.soaks:
        out("")
        for line in soak_lines(soak):
            out(line, markup=False)
        if soak.report_path.exists():
            out(f"  report: {soak.report_path}", markup=False)


def _render_shown(
    answer: ShowAnswer, shown: ShownEvidence, console: Console, markdown: bool
) -> None:
    out = console.print
    whose = "today's fingerprint" if answer.today and answer.asked == answer.today.id else ""
    age = f"{shown.age_days:.1f} days old" + (" — STALE" if shown.stale else "")
    out(
        f"evidence {shown.evidence.fingerprint} {f'({whose}) ' if whose else ''}— measured "
        f"{_when(shown.evidence.created_at)}, {age}"
    )
    if shown.differences:
        out("differs from today: " + ", ".join(shown.differences))
    if markdown:
        out(markdown_table(shown.rows, columns_for(shown.judgement)), markup=False)
    else:
        table, dropped = fitting_table(step_views(shown.evidence.steps, shown.judgement), console)
        out(table)
        left_out = left_out_line(dropped)
        if left_out:
            out(left_out, markup=False)
    out("verdicts:")
    names = [row[0] for row in shown.rows]
    for name, verdict in zip(names, shown.judgement.verdicts, strict=True):
        gain = ""
        interval = gain_range(verdict)
        if verdict.gain is not None and verdict.slots > 1 and interval:
            gain = f", {verdict.gain:+.1%} ({interval})"  # never a point without its interval
        broken = f" — {verdict.broken[0]}" if verdict.broken else ""
        label = shown_label(verdict, shown.judgement)
        out(f"  {name:<10} {label}{gain}{broken}", markup=False)
    for step, verdict in zip(shown.evidence.steps, shown.judgement.verdicts, strict=True):
        if verdict.inconclusive:
            out("  " + inconclusive_sentence(verdict, step, shown.min_gain), markup=False)
    if shown.confidence:
        out(
            f"intervals at {shown.confidence:.0%} confidence ({shown.interval_method})",
            markup=False,
        )
    if not shown.with_intervals:
        out(
            "measured without intervals (one pass over the corpus per step); "
            "calibrate again for intervals",
            markup=False,
        )
    for line in prefix_cache_lines(shown.evidence, shown.judgement):
        out(line, markup=False)
    if any(step.runner_reported for step in shown.evidence.steps):
        out("runner reported at start-up:")
        for name, step in zip(names, shown.evidence.steps, strict=True):
            out(f"  {name:<10} {describe_reported(step.runner_reported)}", markup=False)
    out(f"decided on {shown.judgement.figures.decided_by}", markup=False)
    out(f"ideal N = {shown.judgement.ideal} — {shown.judgement.reason}", markup=False)
    decision = shown.evidence.document.decision
    more = more_slots_line(
        shown.judgement.ideal,
        max((step.slots for step in shown.evidence.steps), default=1),
        decision.stop_reason if decision is not None else None,
    )
    if more is not None:
        out(more, markup=False)
    _render_latency(shown, console)
    out("files:")
    for path in shown.files:
        out(f"  {path}", markup=False)
    if shown.missing_files:
        out(
            f"  (no full report yet: `vibey-gh slots show --fingerprint "
            f"{shown.evidence.fingerprint} --report` writes it)",
            markup=False,
        )


def _render_latency(shown: ShownEvidence, console: Console) -> None:
    """The latency table and what it says about the ideal N and the latency bounds."""
    if not any(v.latency for v in shown.judgement.verdicts):
        return
    confidence = shown.bounds.confidence
    console.print(
        f"latency, p50 / p95 (the p95's distribution-free interval at {confidence:.0%}):",
        markup=False,
    )
    names = [row[0] for row in shown.rows]
    for line in latency_step_lines(shown.judgement, confidence, names):
        console.print(line, markup=False)
    for line in shown.latency_lines:
        console.print(line, markup=False)


__all__ = [
    "csv_text",
    "gather_kept",
    "kept_json",
    "kept_lines",
    "no_evidence_to_write",
    "render_answer",
    "write_html",
]
