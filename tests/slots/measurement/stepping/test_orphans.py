"""A crashed calibration's runner is stopped by the rerun; anybody else's never is."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

from vibey_gh.interfaces.schema import checked
from vibey_gh.slots.measurement.stepping.orphans import (
    RunnerRecord,
    _orphaned_embedded_runner,
    read_runner_record,
    remember_runner,
    shows_launch,
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


SLEEPER = (sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)")


def start_sleeper() -> subprocess.Popen[str]:
    return subprocess.Popen(SLEEPER, stdout=subprocess.PIPE, text=True)


def test_the_recorded_runner_is_stopped_only_while_it_is_that_very_process(
    tmp_path: Path,
) -> None:
    record = tmp_path / "calibration-runner.json"
    sleeper = start_sleeper()
    try:
        remember_runner(record, sleeper.pid, SLEEPER)  # recorded before it has even exec'd
        assert sleeper.stdout is not None and sleeper.stdout.readline() == "up\n"
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
    remember_runner(record, os.getpid(), tuple(psutil.Process().cmdline()))
    mine = read_runner_record(record)
    assert mine is not None and mine.pid == os.getpid()
    assert mine.cmdline == tuple(psutil.Process().cmdline())
    assert mine.is_running_as(psutil.Process())
    assert checked(json.loads(record.read_text()), RunnerRecord) == mine
    # a file of another shape names nobody: no stop, and it is removed
    for foreign in ({"pid": "12"}, {"pid": os.getpid(), "cmdline": "python"}, [1], "x"):
        record.write_text(json.dumps(foreign))
        assert read_runner_record(record) is None
        assert stop_orphaned_runner(record) is None and not record.exists()
    # without a start time or a command line it is never taken for a live process
    assert not RunnerRecord(os.getpid(), None, None).is_running_as(psutil.Process())


def test_every_record_names_its_runner_when_many_start_at_once(tmp_path: Path) -> None:
    """Recorded the instant each is spawned, eight starting side by side: a command line read
    from the child then was, a few times in a hundred, the parent's or none, and never matched."""

    def start_and_record(index: int) -> tuple[subprocess.Popen[str], Path]:
        child = start_sleeper()
        path = tmp_path / f"runner-{index}.json"
        remember_runner(path, child.pid, SLEEPER)
        return child, path

    with ThreadPoolExecutor(8) as pool:
        started = list(pool.map(start_and_record, range(16)))
    try:
        for child, path in started:
            assert child.stdout is not None and child.stdout.readline() == "up\n"
            record = read_runner_record(path)
            assert record is not None and record.pid == child.pid
            assert record.is_running_as(psutil.Process(child.pid))
            assert not record.is_running_as(psutil.Process())  # the starter is not the runner
    finally:
        for child, _ in started:
            child.kill()
            child.wait()


def test_a_runner_recorded_before_it_has_exec_d_is_still_named_by_its_record(
    tmp_path: Path,
) -> None:
    """The race made certain: the child still shows its parent's command line when recorded."""
    readable, writable = os.pipe()
    go, told = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: exec only once the parent has recorded it and says go
        try:
            os.dup2(writable, 1)
            os.close(told)
            os.read(go, 1)
            os.execv(SLEEPER[0], SLEEPER)
        finally:
            os._exit(127)
    os.close(writable)
    os.close(go)
    path = tmp_path / "calibration-runner.json"
    try:
        assert psutil.Process(pid).cmdline() == psutil.Process().cmdline()  # not exec'd yet
        remember_runner(path, pid, SLEEPER)
        os.write(told, b"g")
        with os.fdopen(readable) as output:
            assert output.readline() == "up\n"
        record = read_runner_record(path)
        assert record is not None and record.is_running_as(psutil.Process(pid))
        assert stop_orphaned_runner(path) == pid
    finally:
        os.close(told)
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)  # unless the stop has reaped it


def test_a_script_run_through_its_interpreter_still_shows_its_launch() -> None:
    launched = ("llama-server", "--port", "9")
    assert shows_launch(launched, launched)
    assert shows_launch(("/usr/bin/python3", "/venv/bin/llama-server", "--port", "9"), launched)
    assert not shows_launch(("/usr/bin/python3", "/venv/bin/llama-server", "--port", "8"), launched)
    assert not shows_launch(("/usr/bin/python3", "/venv/bin/other", "--port", "9"), launched)
    assert not shows_launch((), launched)  # mid-exec: nothing shown yet
    assert not shows_launch(launched, ())
