"""`vibey-gh slots allowed`."""

from __future__ import annotations

from pathlib import Path

import click

from ...slots.gate.openmetrics import answer_with_gauges
from ..common import collaborators, emit_json, json_option, library_errors, window_option

FORMATS = ("text", "json", "openmetrics")


@click.command()
@click.option("--model", help="Ask for this model instead of the configured one.")
@window_option("Ask for this window per slot.")
@json_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    help="text (default), json (as --json) or openmetrics (gauges for a scraper).",
)
@click.option(
    "--textfile",
    type=click.Path(path_type=Path),
    help="Also write the gauges to this file, atomically (node-exporter's textfile collector).",
)
@library_errors
def allowed(
    model: str | None,
    window: int | None,
    as_json: bool,
    output_format: str | None,
    textfile: Path | None,
) -> None:
    """How many runs may start now on this device, and why (always exits 0).

    Declaration 1 answers 1. Otherwise the answer comes from the evidence recorded for
    today's fingerprint (device, runner version, model digest, window), re-judged against
    today's bounds. Missing or stale evidence answers 1, says so, and writes a calibration
    request that `slots calibrate --if-requested` (or an idle storm) picks up. A config that
    does not parse answers 1 with the error as the reason: a gate fails safe. On an OS other
    than macOS and Linux the answer is 1, and says so.

    --json adds `reason_code` for scripts: declared, measured, unmeasured, stale, refused,
    unusable_evidence, state_unusable, production_unreachable, config_error or
    unsupported_platform.

    --format openmetrics prints the gauges vibey_gh_slots_allowed, vibey_gh_slots_ideal,
    vibey_gh_evidence_age_seconds and vibey_gh_calibration_requested, labelled with the
    fingerprint, runner, model and window. A --textfile that cannot take them (a missing
    folder, a path in /proc, /sys or /dev, something other than a regular file in the way, a
    read-only or full file system) is a warning on stderr naming the file, and the answer is
    still printed (exit 0): the gate always answers. So is a cache in the state folder that
    cannot be read or written: it is skipped with a warning.

    \b
    Examples:
      vibey-gh slots allowed
      vibey-gh slots allowed --json
      vibey-gh slots allowed --model qwen3:8b --window 32768
      vibey-gh slots allowed --format openmetrics
      vibey-gh slots allowed --textfile /var/lib/node-exporter/vibey-gh.prom
    """
    if as_json and output_format not in (None, "json"):
        raise click.UsageError(f"--json and --format {output_format} ask for two formats")
    chosen = "json" if as_json else (output_format or "text")
    parts = collaborators()
    if chosen == "openmetrics" or textfile is not None:
        answer, metrics, warning = answer_with_gauges(
            model, window, textfile, parts.answer_allowed, parts.decide_allowed
        )
        if warning is not None:
            click.echo(warning, err=True)
    else:
        answer = parts.answer_allowed(model, window)
    if chosen == "json":
        emit_json(answer.to_json())
    elif chosen == "openmetrics":
        click.echo(metrics, nl=False)
    else:
        click.echo(answer.line())
