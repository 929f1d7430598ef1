"""`vibey-gh runner serve`: run a model server in the foreground until Ctrl-C."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import FrameType
from typing import Protocol, runtime_checkable

import click

from ..config import load_config
from ..errors import RunnerError
from ..interfaces.slots_interface import RunnerLaunch
from ..platforms.storage.system_paths import check_output_file
from ..runners.contract import RunningRunner
from ..runners.registry import RUNNER_NAMES, runner_kind
from .common import collaborators, emit_json, json_option, library_errors, supported_platform_only
from .options import threads_option

WATCH_INTERVAL_S = 0.5


@runtime_checkable
class _ReportsExit(Protocol):
    def exit_code(self) -> int | None: ...


class _Terminated(Exception):
    """SIGTERM arrived: stop the runner like Ctrl-C does."""


def _raise_terminated(_signum: int, _frame: FrameType | None) -> None:
    raise _Terminated()


def default_log_path(kind: str, port: int) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    return collaborators().layout().runs / f"{stamp}-serve-{kind}-{port}" / "runner.log"


def _wait_until_stopped(running: RunningRunner) -> None:
    """Block until the runner's process ends on its own (an error) or a signal arrives."""
    while True:
        if isinstance(running, _ReportsExit) and running.exit_code() is not None:
            raise RunnerError(
                f"the runner exited with code {running.exit_code()}; see its log {running.log_path}"
            )
        time.sleep(WATCH_INTERVAL_S)


@click.command()
@click.option(
    "--runner",
    "runner_name",
    default=None,
    help=f"{', '.join(RUNNER_NAMES[:-1])} or {RUNNER_NAMES[-1]} (default: [local_models] runner).",
)
@click.option("--slots", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--window",
    type=click.IntRange(min=64),
    default=None,
    help="Tokens per slot (default: [local_models] window).",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Port on 127.0.0.1 (default: 8080; 11434 for ollama).",
)
@click.option(
    "--model",
    default=None,
    help='"default" (the shipped SmolLM2), a .gguf path, or an Ollama model name.',
)
@threads_option("CPU threads.")
@click.option("--binary", default=None, help="llama-server or ollama executable.")
@click.option(
    "--log",
    "log_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Runner log file (default: under the state dir's runs/).",
)
@click.option(
    "--ready-timeout",
    type=click.FloatRange(min=1.0),
    default=180.0,
    show_default=True,
    help="Seconds to wait for the model to load.",
)
@json_option
@library_errors
@supported_platform_only
def serve(
    runner_name: str | None,
    slots: int,
    window: int | None,
    port: int | None,
    model: str | None,
    threads: int | None,
    binary: str | None,
    log_path: Path | None,
    ready_timeout: float,
    as_json: bool,
) -> None:
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
    if log_path is not None:
        check_output_file(log_path, "--log")
    config = load_config()
    chosen = runner_kind(runner_name or config.runner)
    kind = chosen.name
    chosen_port = port or chosen.default_port
    launch = RunnerLaunch(
        slots=slots,
        window=window or config.window,
        port=chosen_port,
        model=model or config.model,
        log_path=log_path or default_log_path(kind, chosen_port),
        binary=binary or config.runner_binary,
        threads=threads,
    )
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    running: RunningRunner | None = None
    try:
        # a server of this package reads its own settings from the config (the simulated
        # kind's capacity model); another program's is served as launched, without production's
        kind_config = config if chosen.calibrates_this_package else None
        running = chosen.calibration_runner(config=kind_config).start(launch)
        running.wait_ready(ready_timeout)
        facts = {
            "runner": kind,
            "url": running.base_url,
            "log": str(running.log_path),
            "pid": running.pid,
            "slots": launch.slots,
            "window": launch.window,
            "model": launch.model,
        }
        if as_json:
            emit_json(facts)
        else:
            click.echo(f"{kind} runner: {launch.slots} slots x {launch.window} tokens")
            click.echo(f"url: {running.base_url}")
            click.echo(f"log: {running.log_path}")
            click.echo("Ctrl-C stops it.", err=True)
        _wait_until_stopped(running)
    except (KeyboardInterrupt, _Terminated):
        click.echo("stopping the runner", err=True)
    finally:
        try:
            if running is not None:
                running.stop()
        finally:
            signal.signal(signal.SIGTERM, previous)
