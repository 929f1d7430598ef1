"""`vibey-gh slots allowed`."""

from __future__ import annotations

import click

from ..config import MIN_WINDOW
from .common import emit_json, injected_platform, json_option, library_errors


@click.command()
@click.option("--model", help="Ask for this model instead of the configured one.")
@click.option("--window", type=click.IntRange(MIN_WINDOW), help="Ask for this window per slot.")
@json_option
@library_errors
def allowed(model: str | None, window: int | None, as_json: bool) -> None:
    """How many runs may start now on this device, and why (always exits 0).

    Declaration 1 answers 1. Otherwise the answer comes from the evidence recorded for
    today's fingerprint (device, runner version, model digest, window), re-judged against
    today's bounds. Missing or stale evidence answers 1, says so, and writes a calibration
    request that `slots calibrate --if-requested` (or an idle storm) picks up. On an OS other
    than macOS and Linux the answer is 1, and says so.

    \b
    Examples:
      vibey-gh slots allowed
      vibey-gh slots allowed --json
      vibey-gh slots allowed --model qwen3:8b --window 32768
    """
    from ..slots.allowed import decide_allowed

    answer = decide_allowed(model=model, window=window, platform=injected_platform())
    if as_json:
        emit_json(answer.to_json())
    else:
        click.echo(answer.line())
