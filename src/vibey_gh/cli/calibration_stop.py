"""How a stop signal ends a calibration or a soak: the way Ctrl-C does, once, whatever arrives."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

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

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
