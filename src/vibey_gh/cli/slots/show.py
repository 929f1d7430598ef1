"""`vibey-gh slots show`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ...config import load_config
from ...platforms.storage.system_paths import check_new_output_file
from ...slots.report.show import gather_show, show_json
from ...slots.report.terminal.consoles import show_console
from ...slots.report.terminal.show_text import (
    csv_text,
    gather_kept,
    kept_json,
    kept_lines,
    render_answer,
    show_asked,
    write_html,
)
from ..common import collaborators, emit_json, json_command

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
    help="table (default: fits the terminal, the ideal N highlighted), markdown (the "
    "report's full table), csv (one row per step, numbers as numbers) or json (as --json).",
)
@click.option(
    "--history",
    "history",
    is_flag=True,
    help="List the sweeps and soaks a newer one replaced (kept, the last 10 of each).",
)
@json_command
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
    # the history has no --format: the sweeps and soaks kept, in JSON or in lines
    formats = (as_json, None if history else output_format)
    asked, chosen = show_asked(fingerprint_argument, fingerprint, *formats)
    if history:
        kept, soaks = gather_kept(asked, collaborators().allowed_deps())
        if as_json:
            emit_json(kept_json(kept, soaks))
        else:
            click.echo("\n".join(kept_lines(kept, soaks)))
        return
    if html_path is not None:
        check_new_output_file(html_path, "--html")
    answer = gather_show(asked, write=write_report, deps=collaborators().allowed_deps())
    html_written = write_html(answer, load_config().bounds, html_path) if html_path else None
    if chosen == "json":
        emit_json({**show_json(answer), "html": str(html_written) if html_written else None})
        return
    if chosen == "csv":
        click.echo(csv_text(answer), nl=False)
        return
    console = show_console(soft_wrap=not sys.stdout.isatty())
    render_answer(answer, console, markdown=chosen == "markdown")
    if html_written is not None:
        click.echo(f"html report: {html_written}")
