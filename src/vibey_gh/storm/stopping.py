"""How a stop signal ends each long command: a calibration or a soak the way Ctrl-C does, once,
whatever arrives, with the model lock held whole meanwhile (the command line hands
`locked_run` to the library, which may not import the storm's lock itself); a lane or a
storm after the turn in flight, through its own handler."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TypeVar

from ..composition import Collaborators
from ..config import load_config
from ..lanes.client import STOP_GRACE_S, cancel_production_requests
from ..lanes.loop import LaneOptions, LaneOutcome, check_repository, run_spec_lane
from ..lanes.specs import load_spec
from ..platforms.process.stopsignals import signals_handled
from ..slots.measurement.calibrate import CalibrationProgress
from ..slots.measurement.live_progress import make_progress
from ..slots.measurement.options import LockedRun
from ..state import StateLayout
from .lock import model_lock
from .runner import run_storm
from .setup import StormControl, StormOptions, StormSummary, default_deps

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
        print(
            f"{role} stopped ({name}): {stopped}; rerun the same command to resume", file=sys.stderr
        )
        raise SystemExit(128 + received[0])
    return outcome


def locked_run(role: str, stopped: str) -> LockedRun:
    """`run_until_stopped` for the library to call, as `role`, saying `stopped` on a stop."""

    def run(layout: StateLayout, work: Callable[[CalibrationProgress], T]) -> T | None:
        return run_until_stopped(layout, role, work, stopped)

    return run


def run_lane_until_stopped(
    spec_path: Path,
    max_turns: int,
    retries: int,
    max_tokens: int | None,
    wait: bool,
    parts: Collaborators,
) -> LaneOutcome:
    """`lane run`: one lane of the spec at `spec_path`, holding the model lock shared (waiting
    while a calibration holds it, or refusing unless `wait`). The first SIGINT or SIGTERM
    stops it after the turn in flight, a turn still in flight `STOP_GRACE_S` later is
    cancelled whatever production does; a second one stops at once."""
    config = load_config()
    spec = load_spec(spec_path)
    executor = check_repository(spec)
    layout = parts.layout()
    stop = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        _say(
            f"stopping after the turn in flight, cancelled after {STOP_GRACE_S:g}s "
            "(again to stop at once)"
        )
        stop.set()
        # a production that never ends the turn (one dripping a byte at a time) must not hold
        # the stop for the request's whole timeout: its connection is shut down after the grace
        cancel = threading.Timer(STOP_GRACE_S, cancel_production_requests, (config,))
        cancel.daemon = True
        cancel.start()

    with (
        signals_handled(request_stop, signal.SIGINT, signal.SIGTERM),
        model_lock(layout, exclusive=False, wait=wait, role="lane", on_wait=_say, stop=stop),
    ):
        client = parts.production_client(config)
        return run_spec_lane(
            spec,
            config,
            client,
            layout.lanes,
            LaneOptions(max_turns=max_turns, retries=retries),
            max_tokens,
            stop,
            executor,
        )


def run_storm_until_stopped(options: StormOptions, parts: Collaborators) -> StormSummary:
    """`storm run`: the first SIGINT or SIGTERM starts no new lane and lets the running ones
    stop after their turn in flight; one during a calibration, or a second one, stops at once."""
    control = StormControl()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        if control.calibrating or control.stop.is_set():
            raise KeyboardInterrupt
        _say(
            "stopping: no new lanes; running lanes stop after their turn in flight "
            f"(cancelled after {options.stop_grace_s:g}s)"
        )
        control.request_stop()

    with signals_handled(request_stop, signal.SIGINT, signal.SIGTERM):
        return run_storm(options, default_deps(_say, parts), control)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
