"""`vibey-gh doctor`: what `vibey_gh.doctor` gathers and what `slots calibrate` needs."""

from __future__ import annotations

import click

from ..config import load_config
from ..doctor import gather, report_lines
from ..interfaces import schema
from ..slots.measurement.readiness import doctor_checks, doctor_json, doctor_lines
from .common import collaborators, emit_json, json_command, window_option


@click.command()
@click.option("--model", help="Identify this model instead of the configured one.")
@window_option("Fingerprint for this window.")
@json_command
def doctor(model: str | None, window: int | None, as_json: bool) -> None:
    """What was detected on this machine: every device fact and where it came from (or why it
    is missing), memory now, the production runner's identity, the fingerprint that evidence
    is keyed to, and everything `slots calibrate` needs for the configured runner: the
    calibration binary (found, runs, its version, the same as production's), the model (the
    file, or pulled in Ollama), the calibration port (free, or who holds it), the state folder
    (writable), production (answering, idle, its parallelism) and the checkpoints on disk.
    Each line not "ok" says what to do. Always exits 0 once the config is readable: doctor
    reports, it does not judge (`--json` has calibrate.ready for scripts).

    \b
    Examples:
      vibey-gh doctor
      vibey-gh doctor --json
      vibey-gh doctor --model qwen3:8b --window 32768
    """
    config = load_config().with_overrides(model=model, window=window)
    parts = collaborators()
    report = gather(config, parts.probes(), parts.identify_production, parts.production_drift)
    layout = parts.layout()
    today = report.fingerprint.id if report.fingerprint else None
    checks = doctor_checks(config, layout, report.runner, report.runner_error, today)
    if as_json:
        emit_json(doctor_json(schema.as_json(report.output()), layout.root, checks))
    else:
        click.echo("\n".join(doctor_lines(report_lines(report), layout.root, checks)))
