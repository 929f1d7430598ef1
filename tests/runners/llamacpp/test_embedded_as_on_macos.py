"""The real embedded runner in an interpreter whose signal module is as on macOS.

macOS's CPython has no `signal.sigtimedwait` nor `signal.sigwaitinfo` (its libc lacks them).
Each runner here is `python -m vibey_gh.runners.llamacpp.embedded` started after both were deleted
(`macos_like`), so a stop path that needed either would fail here as it would on a Mac. The
runner must start, answer, stop cleanly on SIGTERM and on SIGINT within 5 s, and leave when
the process that started it is gone.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from macos_like import macos_like_argv

from tests.support.ports import free_port
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.llamacpp.embedded import KIND, child_argv
from vibey_gh.runners.llamacpp.models import default_model_path
from vibey_gh.runners.llamacpp.server import LlamaCppServer
from vibey_gh.runners.process import ChildProcess, ensure_port_free

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

STOP_WITHIN_S = 5.0
SETTINGS = ChatSettings(window=256, max_tokens=8, temperature=0.0, seed=42, timeout_s=120)
QUESTION = [{"role": "user", "content": "Say hello."}]


def macos_like_runner(log_path: Path, port: int) -> LlamaCppServer:
    launch = RunnerLaunch(1, 256, port, "default", log_path, threads=1)
    arguments = child_argv(default_model_path(), launch)[3:]  # past `python -m module`
    argv = macos_like_argv("vibey_gh.runners.llamacpp.embedded", *arguments)
    child = ChildProcess.start(argv, log_path, name="embedded runner (as on macOS)")
    return LlamaCppServer(
        kind=KIND, child=child, port=port, model_path=default_model_path(), version=lambda _: None
    )


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[LlamaCppServer]:
    server = macos_like_runner(tmp_path / "runner.log", free_port())
    try:
        server.wait_ready(180)
        yield server
    finally:
        server.stop()


def seconds_to_exit(pid: int, limit_s: float) -> float | None:
    started = time.monotonic()
    process = psutil.Process(pid)
    try:
        process.wait(timeout=limit_s)
    except psutil.TimeoutExpired:
        return None
    return time.monotonic() - started


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_it_answers_then_stops_cleanly_on_a_stop_signal(
    runner: LlamaCppServer, sig: signal.Signals
) -> None:
    turn = runner.chat(QUESTION, None, SETTINGS)
    assert turn.served, turn.error
    assert turn.text
    assert runner.pid is not None
    port = int(runner.base_url.rsplit(":", 1)[1])
    psutil.Process(runner.pid).send_signal(sig)
    took = seconds_to_exit(runner.pid, STOP_WITHIN_S)
    assert took is not None, f"still running {STOP_WITHIN_S:g} s after {sig.name}"
    log = runner.log_path.read_text()
    assert "signal module as on macOS: no sigtimedwait, sigwaitinfo" in log
    assert f"embedded runner: {sig.name}, stopping" in log
    assert "main loop exited" in log  # it shut the server down; it was not killed
    ensure_port_free(port)


def test_it_leaves_when_the_process_that_started_it_is_killed(tmp_path: Path) -> None:
    starter = (
        "import sys\n"
        "from pathlib import Path\n"
        "sys.path[:0] = [sys.argv[2], sys.argv[4]]\n"
        "from test_embedded_as_on_macos import macos_like_runner\n"
        "runner = macos_like_runner(Path(sys.argv[1]), int(sys.argv[3]))\n"
        "runner.wait_ready(180)\n"
        "print(runner.pid, flush=True)\n"
        "import time; time.sleep(600)\n"
    )
    log_path = tmp_path / "runner.log"
    here = Path(__file__).resolve().parent
    root = here.parents[2]  # where `tests.support` is imported from
    parent = subprocess.Popen(
        [sys.executable, "-c", starter, str(log_path), str(here), str(free_port()), str(root)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    # it looks for its parent once a second, then shuts the server down
    assert seconds_to_exit(child_pid, 30.0) is not None
    log = log_path.read_text()
    assert "signal module as on macOS" in log
    assert "parent gone, stopping" in log
