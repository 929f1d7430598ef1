"""Waiting for SIGTERM or SIGINT without a Python signal handler, on Linux and macOS.

`StopSignals.block()` blocks both signals in the calling thread, so every thread started after
it (llama.cpp's included) inherits the block, and starts one thread that takes them with
`signal.sigwait`. A stop therefore never interrupts any thread at an arbitrary point: no
handler runs (a Python handler that set a threading.Event could deadlock on the lock the
interrupted wait held), llama.cpp's own handlers never see the signal, and one sent before the
server is up waits, pending, until the waiting thread takes it.

`sigwait` and `pthread_sigmask` exist on both systems; `sigtimedwait` and `sigwaitinfo` do not
exist on macOS, whose libc lacks them, so they are not used. The timed wait the caller needs
(to look for its parent once a second) is a `threading.Event` the waiting thread sets.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})


@contextlib.contextmanager
def signals_handled(
    handler: Callable[[int, FrameType | None], None], *signals: signal.Signals
) -> Iterator[None]:
    """`handler` for `signals` while the block runs (a Python handler, in the main thread);
    the handlers before it again after."""
    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class StopSignals:
    """SIGTERM and SIGINT, blocked and taken by a thread of their own.

    stop = StopSignals()
    stop.block()                 # before any thread that must not take them starts
    while not stop.wait(1.0):
        ...                      # look around once a second
    stop.close()
    """

    def __init__(self) -> None:
        self._received = threading.Event()
        self._closing = False
        self.signal: signal.Signals | None = None
        self._waiter: threading.Thread | None = None

    def block(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        # Started after the block, so this thread has the signals blocked too, as sigwait needs.
        self._waiter = threading.Thread(target=self._take, name="stop-signals", daemon=True)
        self._waiter.start()

    def _take(self) -> None:
        taken = signal.sigwait(STOP_SIGNALS)
        if not self._closing:
            self.signal = signal.Signals(taken)
        self._received.set()

    def wait(self, timeout_s: float) -> bool:
        """True once a stop signal arrived; False after `timeout_s` without one."""
        return self._received.wait(timeout_s) and self.signal is not None

    def close(self) -> None:
        """End the waiting thread (a stop of our own that only it sees). The signals stay
        blocked: a late one must not kill the process while it shuts the server down."""
        waiter = self._waiter
        if waiter is None or not waiter.is_alive():
            return
        self._closing = True
        if waiter.ident is not None:
            signal.pthread_kill(waiter.ident, signal.SIGTERM)
        waiter.join(timeout=5.0)


def wait_until_stopped(stop: StopSignals, parent: int, name: str, check_s: float) -> None:
    """Block until a stop signal arrives or `parent` is gone (looked for every `check_s`),
    saying on stderr which: a child server outliving the sweep that started it would hold the
    port and the memory of the next step."""
    while not stop.wait(check_s):
        if os.getppid() != parent:
            print(f"{name}: parent gone, stopping", file=sys.stderr, flush=True)
            return
    if stop.signal is not None:
        print(f"{name}: {stop.signal.name}, stopping", file=sys.stderr, flush=True)
