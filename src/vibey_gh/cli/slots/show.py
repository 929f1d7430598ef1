"""`vibey-gh slots show`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ...errors import BadInput
from ..common import (
    collaborators,
    emit_json,
    json_option,
    library_errors,
    stdout_is_terminal,
)

if TYPE_CHECKING:
    from rich.console import Console

    from ...slots.evidence.soak_file import SoakRecord
    from ...slots.report.show import ShowAnswer, ShownEvidence


FORMATS = ("table", "markdown", "csv", "json")


@click.command()
@click.argument("fingerprint_argument", metavar="[FINGERPRINT]", required=False)
@click.option(
    "--fingerprint", help="Show this fingerprint's evidence instead of today's (as FINGERPRINT)."
)
@click.option(
    "--report",
    "write_report",
    is_flag=True,
    help="(Re)write the full report and its plots beside the evidence first.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path),
    help="Also write the report as one self-contained HTML page (plots embedded) to FILE.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default=None,
    help="table (default: fits the terminal, the ideal N highlighted), markdown (the "
    "report's full table), csv (one row per step, numbers as numbers) or json (as --json).",
)
@click.option(
    "--history",
    "history",
    is_flag=True,
    help="List the sweeps and soaks a newer one replaced (kept, the last 10 of each).",
)
@json_option
@library_errors
def show(
    fingerprint_argument: str | None,
    fingerprint: str | None,
    write_report: bool,
    html_path: Path | None,
    output_format: str | None,
    history: bool,
    as_json: bool,
) -> None:
    """The evidence for this device: step table, latency, verdicts, ideal N and report files.

    Today's fingerprint is computed as `slots allowed` computes it (device, runner version,
    model digest, window); its evidence is re-judged against today's bounds. Evidence for
    other fingerprints in the state dir is listed with what differs from today. The ideal N
    is the knee: the last step that showed a min_gain gain over the best step before it; the
    steps past it are named with what they add. When today's
    fingerprint cannot be computed (the production runner does not answer), that is said and
    the evidence present is still listed.

    Latency per step: p50 and p95 of time to first token (TTFT), time per output token (TPOT,
    a turn's mean gap), inter-token latency (ITL, every gap: p95 and p99) and the whole turn,
    each p95 with its distribution-free interval; what the ideal N costs in latency against one
    slot; and, for each latency bound set in [local_models.bounds] (ttft_p95_seconds,
    tpot_p95_seconds, itl_p95_seconds, latency_factor), the largest N that met it.

    Speed per step as llama-bench gives it: prompt processing (pp) and generation (tg) in
    tokens/s, the mean of each turn's rate ± their standard deviation, from the runner's own
    timings (llama-server's `timings`, Ollama's eval counts and durations); where a runner
    reports none, or the evidence predates them, the cell says so (JSON and CSV: null, with
    pp_why_none / tg_why_none).

    --history lists the sweeps that a newer calibration replaced for the fingerprint (today's,
    or every fingerprint's when today's cannot be computed): a calibration never discards
    evidence, it keeps the last 10 it replaced under evidence/history/<fp>/, each still
    sealed evidence that `slots compare` reads. Soaks are kept the same way, the last 10 at
    each N under evidence/history/<fp>/soak-n<N>/: the soak a newer one replaced, and a
    stopped soak that did not take a complete one's place.

    Exit codes: 0 when it showed what there is, including "no evidence for today" (the answer
    is then one run at a time); 1 when FINGERPRINT names evidence that does not exist or
    cannot be read (or --format csv has no evidence to write); 2 for a malformed fingerprint,
    or an --html path in /proc, /sys or /dev or one that exists and is not a regular file
    (refused before anything is read).

    \b
    Examples:
      vibey-gh slots show
      vibey-gh slots show --report              write the Markdown report and PNG plots
      vibey-gh slots show --html report.html    one page to send a colleague
      vibey-gh slots show f99b07f610204948      another fingerprint's evidence
      vibey-gh slots show --format markdown     the full table, to paste
      vibey-gh slots show --format csv > steps.csv
      vibey-gh slots show --history             the sweeps replaced, still kept
      vibey-gh slots show --json
    """
    from ...slots.report.show import gather_show

    if fingerprint_argument and fingerprint and fingerprint_argument != fingerprint:
        raise BadInput("give the fingerprint once: as FINGERPRINT or as --fingerprint")
    if history:
        _show_history(fingerprint_argument or fingerprint, as_json)
        return
    chosen = _format_of(output_format, as_json)
    if html_path is not None:
        check_html_target(html_path)
    answer = gather_show(
        fingerprint_argument or fingerprint,
        write=write_report,
        deps=collaborators().allowed_deps(),
    )
    html_written = _write_html(answer, html_path) if html_path is not None else None
    if chosen == "json":
        emit_json({**answer.to_json(), "html": str(html_written) if html_written else None})
        return
    if chosen == "csv":
        click.echo(_csv_text(answer), nl=False)
        return
    render_answer(answer, _console(), markdown=chosen == "markdown")
    if html_written is not None:
        click.echo(f"html report: {html_written}")


def _show_history(fingerprint: str | None, as_json: bool) -> None:
    from ...slots.evidence.soak_history import describe_soak, kept_soaks
    from ...slots.report.show import gather_history

    deps = collaborators().allowed_deps()
    kept = gather_history(fingerprint, deps=deps)
    soaks = {fp: kept_soaks(deps.layout, fp) for fp in kept}
    if as_json:
        emit_json(
            {
                fp: [sweep.to_json() for sweep in sweeps]
                + [_kept_soak_json(path, soak) for path, soak in soaks[fp]]
                for fp, sweeps in kept.items()
            }
        )
        return
    if not any(kept.values()) and not any(soaks.values()):
        named = ", ".join(kept) or "any fingerprint"
        click.echo(f"no replaced sweep kept for {named}")
        return
    for fp, sweeps in kept.items():
        click.echo(f"{fp}: {len(sweeps)} replaced sweep(s) kept, newest first")
        for sweep in sweeps:
            steps = f", {sweep.steps} step(s)" if sweep.steps is not None else ""
            click.echo(f"  {sweep.describe()}{steps}: {sweep.path}")
        if soaks[fp]:
            click.echo(f"{fp}: {len(soaks[fp])} soak(s) kept, newest first")
        for path, soak in soaks[fp]:
            said = f"unusable soak file ({soak})" if isinstance(soak, str) else describe_soak(soak)
            click.echo(f"  {said}: {path}")


def _kept_soak_json(path: Path, soak: SoakRecord | str) -> dict[str, object]:
    from ...slots.evidence.soak_history import describe_soak

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


def _format_of(output_format: str | None, as_json: bool) -> str:
    if as_json and output_format not in (None, "json"):
        raise BadInput(f"--json and --format {output_format} ask for two formats; give one")
    return "json" if as_json else output_format or "table"


def no_evidence_to_write(kind: str) -> str:
    """What to do when there is no evidence to write as `kind`: measure, or name other."""
    return (
        f"no evidence to write as {kind}: `vibey-gh slots calibrate` records it for this "
        "device, or name other evidence by its FINGERPRINT (`vibey-gh slots show` lists it)"
    )


def _csv_text(answer: ShowAnswer) -> str:
    import csv
    import io

    from ...errors import EvidenceError

    if answer.shown is None:
        raise EvidenceError(no_evidence_to_write("CSV"))
    rows = answer.shown.steps
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def check_html_target(path: Path) -> None:
    from ...errors import BadInput
    from ...platforms.storage.system_paths import check_output_file

    check_output_file(path, "--html")
    if not path.parent.is_dir():
        raise BadInput(f"--html {path}: no such folder {path.parent}")


def _write_html(answer: ShowAnswer, path: Path) -> Path:
    from ...config import load_config
    from ...errors import EvidenceError
    from ...slots.report.documents.html import write_html_report

    if answer.shown is None:
        raise EvidenceError(no_evidence_to_write("HTML"))
    return write_html_report(
        answer.shown.evidence, load_config().bounds, path, judgement=answer.shown.judgement
    )


def _console() -> Console:
    from .show_console import ReaderMayLeave

    # markup off: evidence holds text from elsewhere (paths, model names, "vibey-gh[plots]")
    return ReaderMayLeave(highlight=False, markup=False, soft_wrap=not stdout_is_terminal())


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "unknown time"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def render_answer(answer: ShowAnswer, console: Console, *, markdown: bool = False) -> None:
    """Print the answer: rich's table at the console's width, or Markdown (the report's
    table, each other line a paragraph or a list item of its own)."""
    if markdown:
        from .show_console import markdown_console

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
    if answer.soaks:
        from ...slots.report.soak_view import lines

        for soak in answer.soaks:
            out("")
            for line in lines(soak):
                out(line, markup=False)
            if soak.report_path.exists():
                out(f"  report: {soak.report_path}", markup=False)


def _render_shown(
    answer: ShowAnswer, shown: ShownEvidence, console: Console, markdown: bool
) -> None:
    from ...slots.judging.judge import gain_range
    from ...slots.judging.truth.reported import describe as describe_reported
    from ...slots.report.tables.step_table import (
        columns_for,
        inconclusive_sentence,
        markdown_table,
        shown_label,
    )

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
        from ...slots.report.tables.step_table import step_views
        from .step_table_view import fitting_table, left_out_line

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
        out(f"intervals at {shown.confidence:.0%} confidence (batch means)", markup=False)
    if not shown.with_intervals:
        out(
            "measured without intervals (one pass over the corpus per step); "
            "calibrate again for intervals",
            markup=False,
        )
    from ...slots.report.tables.split_window import prefix_cache_lines

    for line in prefix_cache_lines(shown.evidence, shown.judgement):
        out(line, markup=False)
    if any(step.runner_reported for step in shown.evidence.steps):
        out("runner reported at start-up:")
        for name, step in zip(names, shown.evidence.steps, strict=True):
            out(f"  {name:<10} {describe_reported(step.runner_reported)}", markup=False)
    out(f"decided on {shown.judgement.figures.decided_by}", markup=False)
    out(f"ideal N = {shown.judgement.ideal} — {shown.judgement.reason}", markup=False)
    from ...slots.report.summary import more_slots_line

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
    from ...slots.report.tables.latency_table import latency_step_lines

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
