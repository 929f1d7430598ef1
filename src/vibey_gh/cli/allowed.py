"""`vibey-gh slots allowed`."""

from __future__ import annotations

import click

from .common import emit_json, json_option, library_errors, window_option


@click.command()
@click.option("--model", help="Ask for this model instead of the configured one.")
@window_option("Ask for this window per slot.")
@json_option
@library_errors
def allowed(model: str | None, window: int | None, as_json: bool) -> None:
    """How many runs may start now on this device, and why (always exits 0).

    Declaration 1 answers 1. Otherwise the answer comes from the evidence recorded for
    today's fingerprint (device, runner version, model digest, window), re-judged against
    today's bounds. Missing or stale evidence answers 1, says so, and writes a calibration
    request that `slots calibrate --if-requested` (or an idle storm) picks up. A config that
    does not parse answers 1 with the error as the reason: a gate fails safe.

    --json adds `reason_code` for scripts: declared, measured, unmeasured, stale, refused,
    unusable_evidence, production_unreachable or config_error.

    \b
    Examples:
      vibey-gh slots allowed
      vibey-gh slots allowed --json
      vibey-gh slots allowed --model qwen3:8b --window 32768
    """
    from ..slots.allowed import decide_allowed

    answer = decide_allowed(model=model, window=window)
    if as_json:
        emit_json(answer.to_json())
    else:
        click.echo(answer.line())
