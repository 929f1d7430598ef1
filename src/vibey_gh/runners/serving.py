"""`runner serve`: one runner of any kind in the foreground, until Ctrl-C, SIGTERM or its own
exit. Whatever ends it, its whole process tree is stopped on the way out."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Protocol, runtime_checkable

from ..errors import RunnerError
from ..interfaces.slots_interface import RunnerLaunch
from ..platforms.process.stopsignals import signals_handled
from ..platforms.storage.system_paths import check_output_file
from .contract import RunnerConfig, RunnerKind, RunningRunner
from .registry import runner_kind

WATCH_INTERVAL_S = 0.5


@runtime_checkable
class _ReportsExit(Protocol):
    def exit_code(self) -> int | None: ...


class _Terminated(Exception):
    """SIGTERM arrived: stop the runner like Ctrl-C does."""


def _raise_terminated(_signum: int, _frame: FrameType | None) -> None:
    raise _Terminated()


def _wait_until_stopped(running: RunningRunner) -> None:
    """Block until the runner's process ends on its own (an error) or a signal arrives."""
    while True:
        if isinstance(running, _ReportsExit) and running.exit_code() is not None:
            raise RunnerError(
                f"the runner exited with code {running.exit_code()}; see its log {running.log_path}"
            )
        time.sleep(WATCH_INTERVAL_S)


def serve_until_stopped(
    kind: RunnerKind,
    launch: RunnerLaunch,
    config: RunnerConfig,
    ready_timeout_s: float,
    ready: Callable[[RunningRunner], None],
    say: Callable[[str], None],
) -> None:
    """Start `kind` as `launch` asks, call `ready` once its model is loaded, and serve until
    Ctrl-C or SIGTERM (said with `say`) or until it exits by itself (a RunnerError)."""
    running: RunningRunner | None = None
    with signals_handled(_raise_terminated, signal.SIGTERM):
        try:
            # a server of this package reads its own settings from the config (the simulated
            # kind's capacity model); another program's is served as launched, without
            # production's
            kind_config = config if kind.calibrates_this_package else None
            running = kind.calibration_runner(config=kind_config).start(launch)
            running.wait_ready(ready_timeout_s)
            ready(running)
            _wait_until_stopped(running)
        except (KeyboardInterrupt, _Terminated):
            say("stopping the runner")
        finally:
            if running is not None:
                running.stop()


def launch_as_asked(
    config: RunnerConfig,
    runs: Path,
    runner: str | None,
    *,
    slots: int,
    window: int | None,
    port: int | None,
    model: str | None,
    log_path: Path | None,
    binary: str | None,
    threads: int | None,
) -> tuple[RunnerKind, RunnerLaunch]:
    """The kind `runner serve` starts and how: what is not given taken from the config, the
    kind's own port and a fresh folder under `runs` for the log. A log path the system owns is
    refused (BadInput) before anything starts."""
    if log_path is not None:
        check_output_file(log_path, "--log")
    kind = runner_kind(runner or config.runner)
    port = port or kind.default_port
    stamp = time.strftime("%Y%m%dT%H%M%S")
    return kind, RunnerLaunch(
        slots=slots,
        window=window or config.window,
        port=port,
        model=model or config.model,
        log_path=log_path or runs / f"{stamp}-serve-{kind.name}-{port}" / "runner.log",
        binary=binary or config.runner_binary,
        threads=threads,
    )


def served_json(kind: str, running: RunningRunner, launch: RunnerLaunch) -> dict[str, object]:
    """What `runner serve --json` prints once the model is loaded."""
    return {
        "runner": kind,
        "url": running.base_url,
        "log": str(running.log_path),
        "pid": running.pid,
        "slots": launch.slots,
        "window": launch.window,
        "model": launch.model,
    }


def served_lines(kind: str, running: RunningRunner, launch: RunnerLaunch) -> list[str]:
    """What `runner serve` prints once the model is loaded."""
    return [
        f"{kind} runner: {launch.slots} slots x {launch.window} tokens",
        f"url: {running.base_url}",
        f"log: {running.log_path}",
    ]


__all__ = ["launch_as_asked", "serve_until_stopped", "served_json", "served_lines"]
