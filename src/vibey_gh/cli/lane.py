"""`vibey-gh lane run`: one lane against the production runner, with durable records."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from types import FrameType

import click

from ..config import load_config
from ..interfaces import schema
from ..lanes.client import STOP_GRACE_S, cancel_production_requests
from ..lanes.loop import LaneOptions, check_repository, run_spec_lane
from ..lanes.specs import load_spec
from ..platforms.process.stopsignals import signals_handled
from ..storm.lock import model_lock
from .common import collaborators, emit_json, json_option, library_errors, supported_platform_only
from .options import lane_flags, max_tokens_option


@click.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(path_type=Path))
@lane_flags()
@max_tokens_option("Output cap per turn (default: config).")
@click.option("--no-wait", is_flag=True, help="Refuse instead of waiting while a calibration runs.")
@json_option
@library_errors
@supported_platform_only
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
    config = load_config()
    spec = load_spec(spec_path)
    options = LaneOptions(max_turns=max_turns, retries=retries)
    executor = check_repository(spec)
    parts = collaborators()
    layout = parts.layout()
    stop = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        click.echo(
            f"stopping after the turn in flight, cancelled after {STOP_GRACE_S:g}s "
            "(again to stop at once)",
            err=True,
        )
        stop.set()
        # a production that never ends the turn (one dripping a byte at a time) must not hold
        # the stop for the request's whole timeout: its connection is shut down after the grace
        cancel = threading.Timer(STOP_GRACE_S, cancel_production_requests, (config,))
        cancel.daemon = True
        cancel.start()

    with (
        signals_handled(request_stop, signal.SIGINT, signal.SIGTERM),
        model_lock(layout, exclusive=False, wait=not no_wait, role="lane", on_wait=_say, stop=stop),
    ):
        client = parts.production_client(config)
        outcome = run_spec_lane(
            spec, config, client, layout.lanes, options, max_tokens, stop, executor
        )
    if as_json:
        emit_json(schema.as_json(outcome))
    else:
        if outcome.answer:
            click.echo(outcome.answer)
        _say(outcome.summary())
        _say(f"record: {outcome.record}")
    if outcome.status != "answered":
        raise click.exceptions.Exit(1)


def _say(text: str) -> None:
    click.echo(text, err=True)
