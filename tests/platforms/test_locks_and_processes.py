"""File locks and process groups, on this machine for real."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from vibey_gh.platforms.process.processes import (
    pid_alive,
    process_group_of,
    signal_process_group,
    start_in_own_group,
)
from vibey_gh.platforms.storage.locks import try_lock


def test_an_exclusive_lock_excludes_every_other_open_file_until_closed(tmp_path: Path) -> None:
    path = tmp_path / "model.lock"
    first = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    second = os.open(path, os.O_RDWR)
    try:
        assert try_lock(first, exclusive=True)
        assert not try_lock(second, exclusive=False)
        assert not try_lock(second, exclusive=True)
        os.close(first)
        first = -1
        assert try_lock(second, exclusive=False)
    finally:
        for fd in (first, second):
            if fd >= 0:
                os.close(fd)


def test_shared_locks_share(tmp_path: Path) -> None:
    path = tmp_path / "model.lock"
    fds = [os.open(path, os.O_RDWR | os.O_CREAT, 0o600) for _ in range(3)]
    try:
        assert try_lock(fds[0], exclusive=False) and try_lock(fds[1], exclusive=False)
        assert not try_lock(fds[2], exclusive=True)
    finally:
        for fd in fds:
            os.close(fd)


def test_a_child_leads_its_own_group_and_one_signal_reaches_its_children(tmp_path: Path) -> None:
    log = os.open(tmp_path / "out.log", os.O_WRONLY | os.O_CREAT, 0o600)
    grandchild = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); print('up', flush=True); time.sleep(60)"  # noqa: E501
    try:
        child = start_in_own_group([sys.executable, "-c", grandchild], log)
    finally:
        os.close(log)
    try:
        for _ in range(100):
            if (tmp_path / "out.log").read_text().strip() == "up":
                break
            time.sleep(0.1)
        assert process_group_of(child.pid) == child.pid != os.getpgid(0)
        import psutil

        (grand,) = psutil.Process(child.pid).children()
        assert process_group_of(grand.pid) == child.pid
        signal_process_group(child.pid, signal.SIGTERM)
        assert child.wait(timeout=10) == -signal.SIGTERM
        grand.wait(timeout=10)
        assert not pid_alive(grand.pid)
        signal_process_group(child.pid, signal.SIGTERM)  # a group that is gone is no error
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_pid_alive_knows_this_process_and_a_finished_one() -> None:
    assert pid_alive(os.getpid())
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not pid_alive(gone.pid)
