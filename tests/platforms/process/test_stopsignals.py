"""Stop signals taken by a thread of their own, in interpreters with and without sigtimedwait.

"As on macOS": the child deletes `signal.sigtimedwait` and `signal.sigwaitinfo` first, as
macOS's CPython lacks them (its libc does not have them).
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

AS_ON_MACOS = "import signal\ndel signal.sigtimedwait\ndel signal.sigwaitinfo\n"

# A child that waits as the embedded runner does and prints what stopped it. It first checks
# that a thread started after block() has the signals blocked too (llama.cpp's threads are).
WAITER = """
import os, signal, threading
from vibey_gh.platforms.process.stopsignals import StopSignals
stop = StopSignals()
stop.block()
SEND_EARLY
masks = []
later = threading.Thread(target=lambda: masks.append(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
later.start()
later.join()
print("waiting", {signal.SIGTERM, signal.SIGINT} <= masks[0], flush=True)
while not stop.wait(0.2):
    pass
print("stopped by", stop.signal.name, flush=True)
stop.close()
"""


def waiter(as_on_macos: bool, send_early: str = "") -> list[str]:
    code = (AS_ON_MACOS if as_on_macos else "") + WAITER.replace("SEND_EARLY", send_early)
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("as_on_macos", [True, False], ids=["as-on-macos", "this-interpreter"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_is_taken_not_handled(as_on_macos: bool, sig: signal.Signals) -> None:
    child = subprocess.Popen(
        waiter(as_on_macos), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "waiting True\n"
    child.send_signal(sig)
    out, err = child.communicate(timeout=10)
    assert (child.returncode, out, err) == (0, f"stopped by {sig.name}\n", "")


def test_a_signal_sent_before_the_wait_is_kept_until_then() -> None:
    early = waiter(True, send_early="os.kill(os.getpid(), signal.SIGTERM)")
    child = subprocess.run(early, capture_output=True, text=True, timeout=10)
    assert child.returncode == 0, child.stderr
    assert child.stdout == "waiting True\nstopped by SIGTERM\n"


def test_close_ends_the_waiting_thread_without_a_signal_from_outside() -> None:
    code = AS_ON_MACOS + (
        "import threading\n"
        "from vibey_gh.platforms.process.stopsignals import StopSignals\n"
        "stop = StopSignals()\n"
        "stop.block()\n"
        "assert not stop.wait(0.1)\n"
        "stop.close()\n"
        "print(stop.signal, [t.name for t in threading.enumerate()])\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=10)
    assert child.returncode == 0, child.stderr
    assert child.stdout == "None ['MainThread']\n"
