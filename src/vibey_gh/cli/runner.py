"""`vibey-gh runner serve`: run a model server in the foreground until Ctrl-C."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..config import load_config
from ..runners.contract import RunningRunner
from ..runners.registry import RUNNER_NAMES
from ..runners.serving import launch_as_asked, serve_until_stopped, served_json, served_lines
from .common import collaborators, emit_json, machine_command, say
from .options import defaulted, port_option, threads_option


@click.command()
@click.option(
    "--runner",
    "runner_name",
    help=f"{', '.join(RUNNER_NAMES[:-1])} or {RUNNER_NAMES[-1]} (default: [local_models] runner).",
)
@click.option("--slots", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--window",
    type=click.IntRange(min=64),
    help="Tokens per slot (default: [local_models] window).",
)
@port_option("Port on 127.0.0.1 (default: 8080; 11434 for ollama).")
@click.option(
    "--model", help='"default" (the shipped SmolLM2), a .gguf path, or an Ollama model name.'
)
@threads_option("CPU threads.")
@click.option("--binary", help="llama-server or ollama executable.")
@click.option(
    "--log",
    "log_path",
    type=click.Path(path_type=Path),
    help="Runner log file (default: under the state dir's runs/).",
)
@defaulted(
    "--ready-timeout",
    kind=click.FloatRange(min=1.0),
    default=180.0,
    help_text="Seconds to wait for the model to load.",
)
@machine_command
def serve(runner_name: str | None, ready_timeout: float, as_json: bool, **asked: Any) -> None:
    """Run a model server in the foreground until Ctrl-C (or SIGTERM).

    The simulated runner serves llama-server's API over the capacity model of
    [local_models.simulated] (knee, noise, seed, tokens_per_second) instead of a model.
    It binds 127.0.0.1 only, prints its URL and log path once the model is loaded, and stops its
    whole process tree on exit: the embedded runner within a few seconds even in the middle of
    a prompt or an answer. With --json the same facts are printed as one JSON object. A --log
    path in /proc, /sys or /dev, or one that exists and is not a regular file, is refused
    (exit 2).

    \b
    Examples:
      vibey-gh runner serve --runner embedded --slots 2 --window 4096
      vibey-gh runner serve --runner embedded --slots 1 --window 2048 --port 8081 --json
      vibey-gh runner serve --runner llama-server --model ~/models/qwen.gguf --slots 2
      vibey-gh runner serve --runner simulated --slots 4 --window 4096 --port 8090
    """
    config = load_config()
    runs = collaborators().layout().runs
    chosen, launch = launch_as_asked(config, runs, runner_name, **asked)

    def ready(running: RunningRunner) -> None:
        if as_json:
            emit_json(served_json(chosen.name, running, launch))
        else:
            click.echo("\n".join(served_lines(chosen.name, running, launch)))
            say("Ctrl-C stops it.")

    serve_until_stopped(chosen, launch, config, ready_timeout, ready, say)
