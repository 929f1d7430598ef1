"""A crashed calibration's runner is stopped by the rerun; anybody else's never is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil

from vibey_gh.slots.measurement.stepping.orphans import (
    RunnerRecord,
    _orphaned_embedded_runner,
    read_runner_record,
    remember_runner,
    stop_orphaned_runner,
)

MODULE = [sys.executable, "-m", "vibey_gh.runners.llamacpp.embedded", "--port", "1"]


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def test_only_our_embedded_runner_whose_starter_is_gone_counts_as_orphaned() -> None:
    assert _orphaned_embedded_runner([*MODULE, "--parent-pid", str(dead_pid())])
    assert not _orphaned_embedded_runner([*MODULE, "--parent-pid", str(os.getpid())])
    assert not _orphaned_embedded_runner(MODULE)  # `runner serve` children carry no parent pid
    assert not _orphaned_embedded_runner(["ollama", "serve", "--parent-pid", "1"])


def test_the_recorded_runner_is_stopped_only_while_it_is_that_very_process(
    tmp_path: Path,
) -> None:
    record = tmp_path / "calibration-runner.json"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        remember_runner(record, sleeper.pid)
        assert stop_orphaned_runner(record) == sleeper.pid
        assert sleeper.wait(timeout=10) is not None
        assert not record.exists()
    finally:
        sleeper.kill()
    other = {"pid": os.getpid(), "create_time": 1.0, "cmdline": ["other"]}
    record.write_text(json.dumps(other))
    assert stop_orphaned_runner(record) is None  # a reused pid is somebody else
    assert not record.exists()


def test_the_pid_file_is_read_by_its_one_reader_and_a_foreign_one_is_forgotten(
    tmp_path: Path,
) -> None:
    record = tmp_path / "calibration-runner.json"
    remember_runner(record, os.getpid())
    mine = read_runner_record(record)
    assert mine is not None and mine.pid == os.getpid()
    assert mine.cmdline == tuple(psutil.Process().cmdline())
    assert mine.is_running_as(psutil.Process())
    assert RunnerRecord.from_json(json.loads(record.read_text())) == mine
    # a file of another shape names nobody: no stop, and it is removed
    for foreign in ({"pid": "12"}, {"pid": os.getpid(), "cmdline": "python"}, [1], "x"):
        record.write_text(json.dumps(foreign))
        assert read_runner_record(record) is None
        assert stop_orphaned_runner(record) is None and not record.exists()
    # without a start time or a command line it is never taken for a live process
    assert not RunnerRecord(os.getpid(), None, None).is_running_as(psutil.Process())
