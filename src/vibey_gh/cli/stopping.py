"""How a stop signal ends a command: a calibration or a soak the way Ctrl-C does, once,
whatever arrives; a lane or a storm through its own handler."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TypeVar

import click

from ..platforms.process.stopsignals import signals_handled
from ..slots.measurement.calibrate import CalibrationProgress
from ..slots.measurement.live_progress import make_progress
from ..slots.measurement.options import LockedRun
from ..state import StateLayout
from ..storm.lock import model_lock

T = TypeVar("T")

STOP_SIGNALS = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
)  # as many as `slots apply` gives a runner


class CalibrationStopped(KeyboardInterrupt):
    """A stop signal arrived: unwinds like Ctrl-C, so the runner, the pid file and the lock
    are released on the way out and the checkpoint stays."""


@contextlib.contextmanager
def stop_signals_interrupt(received: list[int]) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP all stop a calibration the same way: the first one raises
    CalibrationStopped in the main thread; any later one waits for that stop to finish (a
    second SIGTERM must not cut the runner's stop short). `received` collects them."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) == 1:
            raise CalibrationStopped

    with signals_handled(stop, *STOP_SIGNALS):
        yield


def run_until_stopped(
    layout: StateLayout, role: str, work: Callable[[CalibrationProgress], T], stopped: str
) -> T | None:
    """`work` with a progress display, holding the model lock whole (lanes hold it shared;
    a calibration or a soak takes it whole or refuses) and stopped by any stop signal.

    A stop says `stopped` ("<what> stopped (SIGNAL): <stopped>") on stderr and exits 128 +
    the signal's number; None only if `work` was interrupted without a signal."""
    progress = make_progress(live=sys.stderr.isatty())  # plain lines in logs and CI
    received: list[int] = []
    outcome: T | None = None
    try:
        with (
            stop_signals_interrupt(received),
            model_lock(layout, exclusive=True, wait=False, role=role),
        ):
            outcome = work(progress)
    except CalibrationStopped:
        pass
    finally:
        progress.close()
    if received:
        name = signal.Signals(received[0]).name
        click.echo(
            f"{role} stopped ({name}): {stopped}; rerun the same command to resume", err=True
        )
        raise SystemExit(128 + received[0])
    return outcome


def locked_run(role: str, stopped: str) -> LockedRun:
    """`run_until_stopped` for the library to call, as `role`, saying `stopped` on a stop."""

    def run(layout: StateLayout, work: Callable[[CalibrationProgress], T]) -> T | None:
        return run_until_stopped(layout, role, work, stopped)

    return run
