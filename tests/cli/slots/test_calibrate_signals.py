"""`slots calibrate` stopped by SIGTERM, SIGHUP or SIGINT, for real (its own process, a runner
in a child process, the tiny corpus): the runner is stopped, the pid file and the lock
released, the checkpoint kept, one line says so, and the exit code is 128 + the signal.

What is tested is the stop, which is the same for every kind of runner: SIGTERM stops a sweep
on the embedded runner (llama.cpp in its child process), SIGHUP and SIGINT one on the shipped
simulated runner, a real server in a child process that starts in a fraction of the time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.support.corpus import (
    TINY_WINDOW,
    calibrate_command,
    embedded_work_dir,
    shallow_tiny_corpus,
    tiny_corpus,
)
from tests.support.ports import free_port
from tests.support.processes import gone
from vibey_gh.slots.measurement.stepping.orphans import PID_FILE
from vibey_gh.state import StateLayout

pytestmark = [pytest.mark.timeout(600)]


def simulated_work_dir(folder: Path) -> Path:
    """A working directory whose vibey-gh.toml runs the simulated runner at the tiny window on
    free ports, production down; steps of 1 s leave the stop time to land inside the sweep."""
    work = folder / "cwd"
    work.mkdir()
    (work / "vibey-gh.toml").write_text(
        f'[local_models]\nrunner = "simulated"\nwindow = {TINY_WINDOW}\n'
        f'calibration_port = {free_port()}\nproduction_url = "http://127.0.0.1:{free_port()}"\n'
        "min_step_seconds = 1.0\n"
        "[local_models.simulated]\nknee = 2\nnoise = 0.0\ntokens_per_second = 2000.0\n"
    )
    return work


@pytest.mark.parametrize(
    ("sig", "runner"),
    [
        pytest.param(signal.SIGTERM, "embedded", marks=pytest.mark.integration),
        (signal.SIGHUP, "simulated"),
        (signal.SIGINT, "simulated"),
    ],
)
def test_a_stop_signal_stops_the_sweep_cleanly_and_keeps_the_checkpoint(
    tmp_path: Path, isolated_state: Path, sig: signal.Signals, runner: str
) -> None:
    # short steps and answers: what is tested is the stop, not the step or the answers
    if runner == "embedded":
        # four turns, not eight: llama.cpp reads the shallowest prompts only before the first
        # step is saved and the stop can come
        _, corpus_path = shallow_tiny_corpus(tmp_path)
        work = embedded_work_dir(tmp_path, "min_step_seconds = 0.1\n")
    else:
        _, corpus_path = tiny_corpus(tmp_path)
        work = simulated_work_dir(tmp_path)
    layout = StateLayout(isolated_state)
    command = calibrate_command(corpus_path, 8)
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(isolated_state)}
    sweep = subprocess.Popen(command, cwd=work, env=env, stderr=subprocess.PIPE, text=True)
    pid_file = isolated_state / PID_FILE
    deadline = time.monotonic() + 300
    runner_pid = None
    while time.monotonic() < deadline:  # the second step's runner is up, the first is saved
        if list(layout.progress.glob("*.json")) and pid_file.exists():
            runner_pid = json.loads(pid_file.read_text())["pid"]
            break
        assert sweep.poll() is None, sweep.stderr.read() if sweep.stderr else ""
        time.sleep(0.1)
    assert runner_pid is not None
    sweep.send_signal(sig)
    _, stderr = sweep.communicate(timeout=120)
    assert sweep.returncode == 128 + sig, stderr
    last = stderr.strip().splitlines()[-1]
    assert last == (
        f"calibration stopped ({sig.name}): the runner is stopped and every completed step is "
        "kept; rerun the same command to resume"
    )
    assert "Traceback" not in stderr
    assert gone(runner_pid), (stderr, psutil.Process(runner_pid).cmdline())
    assert not pid_file.exists()
    assert not [p for p in (isolated_state / "locks").rglob("*.json")], "a lock holder is left"
    checkpoint = list(layout.progress.glob("*.json"))
    assert len(checkpoint) == 1 and len(json.loads(checkpoint[0].read_text())["steps"]) >= 1
