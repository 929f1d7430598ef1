"""`runner serve`: one runner of any kind in the foreground, until Ctrl-C, SIGTERM or its own
exit. Whatever ends it, its whole process tree is stopped on the way out."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType
from typing import Protocol, runtime_checkable

from ..errors import RunnerError
from ..interfaces.slots_interface import RunnerLaunch
from ..platforms.process.stopsignals import signals_handled
from .contract import RunnerConfig, RunnerKind, RunningRunner

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


__all__ = ["serve_until_stopped"]
