"""A llama-server or Ollama calibration runner stops when the calibration that started it dies.

Real processes: the runner here is a Python sleeping in place of the binary (the watchdog does
not care what it runs), the calibration a Python process that is killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.support.processes import gone
from vibey_gh.runners.process import ChildProcess
from vibey_gh.runners.watchdog import watched_argv

pytestmark = pytest.mark.timeout(120)

SLEEPER = [sys.executable, "-c", "import time; time.sleep(300)"]


def wait_until(condition, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_the_runner_stops_when_the_calibration_is_killed(tmp_path: Path) -> None:
    calibration = (
        "import json, sys, time\n"
        "from pathlib import Path\n"
        "import psutil\n"
        "from vibey_gh.runners.process import ChildProcess\n"
        "from vibey_gh.runners.watchdog import watched_argv\n"
        f"child = ChildProcess.start(watched_argv({SLEEPER!r}), Path({str(tmp_path / 'r.log')!r}),"
        " name='fake runner')\n"
        "while not psutil.Process(child.pid).children():\n"
        "    time.sleep(0.05)\n"
        "runner = psutil.Process(child.pid).children()[0].pid\n"
        "print(json.dumps({'watchdog': child.pid, 'runner': runner}), flush=True)\n"
        "time.sleep(300)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", calibration], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        pids = json.loads(parent.stdout.readline())
        assert not gone(pids["runner"])
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert wait_until(lambda: gone(pids["runner"]) and gone(pids["watchdog"]), 15), (
            "the runner outlived the calibration"
        )
    finally:
        parent.kill()
    assert "parent gone, stopping the runner" in (tmp_path / "r.log").read_text()


def test_the_runners_exit_code_is_the_watchdogs(tmp_path: Path) -> None:
    child = ChildProcess.start(
        watched_argv([sys.executable, "-c", "raise SystemExit(3)"]), tmp_path / "r.log", name="x"
    )
    assert wait_until(lambda: child.exit_code() is not None, 30)
    assert child.exit_code() == 3


def test_stopping_the_runner_stops_both_at_once(tmp_path: Path) -> None:
    child = ChildProcess.start(watched_argv(SLEEPER), tmp_path / "r.log", name="x")
    assert wait_until(lambda: bool(psutil.Process(child.pid).children()), 30)
    runner = psutil.Process(child.pid).children()[0].pid
    started = time.monotonic()
    child.stop()
    assert gone(runner) and gone(child.pid)
    assert time.monotonic() - started < 10


def test_a_parent_gone_before_the_start_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    argv = watched_argv([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], parent_pid=1)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=os.environ)
    assert done.returncode == 1 and "parent gone before start" in done.stderr
    assert not marker.exists()
