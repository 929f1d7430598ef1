"""`vibey-gh lane run`: one lane against the production runner, with durable records."""

from __future__ import annotations

from pathlib import Path

import click

from ..interfaces import schema
from ..storm.stopping import run_lane_until_stopped
from .common import collaborators, emit_json, machine_command, say
from .options import lane_flags, max_tokens_option


@click.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(path_type=Path))
@lane_flags()
@max_tokens_option("Output cap per turn (default: config).")
@click.option("--no-wait", is_flag=True, help="Refuse instead of waiting while a calibration runs.")
@machine_command
def run(
    spec_path: Path,
    max_turns: int,
    retries: int,
    max_tokens: int | None,
    no_wait: bool,
    as_json: bool,
) -> None:
    """Run one lane from a lane spec against the configured production runner.

    The lane sends the system prompt and the spec's plan, then lets the model call read_file
    and list_dir over the spec's repository — read-only, and never outside its root — until it
    answers in plain text or --max-turns is reached. Every request, reply and tool result is
    appended (and fsynced) to events.jsonl under the state root's lanes/ folder. The lane holds
    the model lock shared: it waits while a calibration holds it (or refuses with --no-wait).
    Exit 0 when the lane answered, 1 when it failed, ran out of turns or was interrupted.
    Ctrl-C (or SIGTERM) stops it after the turn in flight; a turn still in flight 5 s later is
    cancelled, whatever production does.

    \b
    Examples:
      vibey-gh lane run specs/state-layout.toml
      vibey-gh lane run specs/state-layout.toml --max-turns 8 --retries 1 --json
    """
    outcome = run_lane_until_stopped(
        spec_path, max_turns, retries, max_tokens, not no_wait, collaborators()
    )
    if as_json:
        emit_json(schema.as_json(outcome))
    else:
        if outcome.answer:
            click.echo(outcome.answer)
        say(outcome.summary())
        say(f"record: {outcome.record}")
    if outcome.status != "answered":
        raise click.exceptions.Exit(1)
