from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

from tests.support.clocks import ManualClock
from tests.support.ports import free_port
from tests.support.processes import alive
from vibey_gh.errors import BadInput, RunnerError, RunnerNotFound
from vibey_gh.platforms.process.ports import port_holder
from vibey_gh.runners.process import (
    READY_POLL_S,
    ChildProcess,
    ensure_port_free,
    find_executable,
    read_log_tail,
)

# A child that starts a grandchild in a session of its own (so only a tree walk reaches it),
# prints both pids, and ignores SIGTERM (so only SIGKILL ends it).
STUBBORN = """
import signal, subprocess, sys, time
grandchild = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
)
print("pids", grandchild.pid, flush=True)
if "--stubborn" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(600)
"""


def wait_for_line(log: Path, prefix: str) -> str:
    for _ in range(600):
        for line in read_log_tail(log, 50):
            if line.startswith(prefix):
                return line
        time.sleep(0.05)
    raise AssertionError(f"no {prefix!r} line in {log}")


def test_free_port_passes() -> None:
    ensure_port_free(free_port())


def test_port_with_a_listener_is_bad_input() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(BadInput, match=f"port {port} on 127.0.0.1 is already in use") as taken:
            ensure_port_free(port, what_to_do="use another port")
        holder = port_holder(port)
        assert holder is not None and holder.pid == os.getpid(), "this process listens"
        assert str(taken.value).endswith(f"in use by {holder.describe()}; use another port")
        assert "python" in holder.command.lower() or "pytest" in holder.command


def test_a_free_port_has_no_holder() -> None:
    assert port_holder(free_port()) is None


def test_port_out_of_range_is_bad_input() -> None:
    with pytest.raises(BadInput, match="between 1 and 65535"):
        ensure_port_free(70000)


@pytest.mark.parametrize("stubborn", [False, True])
def test_stop_leaves_no_process_of_the_tree(tmp_path: Path, stubborn: bool) -> None:
    log = tmp_path / "logs" / "child.log"
    argv = [sys.executable, "-c", STUBBORN] + (["--stubborn"] if stubborn else [])
    child = ChildProcess.start(argv, log, name="test child")
    grandchild = int(wait_for_line(log, "pids").split()[1])
    assert alive(child.pid) and alive(grandchild)
    child.stop(grace_s=0.2)
    assert not alive(child.pid)
    assert not alive(grandchild)
    assert child.exit_code() is not None
    assert log.stat().st_mode & 0o777 == 0o600
    assert log.parent.stat().st_mode & 0o777 == 0o700
    child.stop()  # a second stop is harmless


ORPHANING = """
import subprocess, sys
code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
grandchild = subprocess.Popen([sys.executable, "-c", code])
print("pids", grandchild.pid, flush=True)
"""


def test_stop_reaches_group_members_whose_parent_already_exited(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    child = ChildProcess.start([sys.executable, "-c", ORPHANING], log, name="leader")
    grandchild = int(wait_for_line(log, "pids").split()[1])
    for _ in range(200):
        if child.exit_code() is not None:
            break
        time.sleep(0.05)
    assert child.exit_code() == 0 and alive(grandchild)
    child.stop(grace_s=0.2)
    assert not alive(grandchild)


def test_wait_ready_fails_fast_with_the_log_tail_when_the_child_exits(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "print('model file is corrupt'); raise SystemExit(3)"]
    child = ChildProcess.start(argv, tmp_path / "c.log", name="broken runner")
    with pytest.raises(RunnerError) as caught:
        child.wait_ready(lambda: False, timeout_s=60)
    message = str(caught.value)
    assert "broken runner exited with code 3 before it was ready" in message
    assert "model file is corrupt" in message


def test_wait_ready_times_out_on_the_injected_clock_and_stops_the_child(tmp_path: Path) -> None:
    child = ChildProcess.start(
        [sys.executable, "-c", "import time; time.sleep(600)"], tmp_path / "c.log", name="slow"
    )
    clock = ManualClock(epoch=1_800_000_000.0)
    with pytest.raises(RunnerError, match="slow was not ready after 5s"):
        child.wait_ready(lambda: False, timeout_s=5, clock=clock)
    assert clock.t >= 5
    assert not alive(child.pid)


def test_wait_ready_returns_the_seconds_waited(tmp_path: Path) -> None:
    child = ChildProcess.start(
        [sys.executable, "-c", "import time; time.sleep(600)"], tmp_path / "c.log", name="ok"
    )
    answers = iter([False, False, True])
    try:
        waited = child.wait_ready(
            lambda: next(answers), timeout_s=5, clock=ManualClock(epoch=1_800_000_000.0)
        )
    finally:
        child.stop()
    assert waited == pytest.approx(2 * READY_POLL_S), "two polls said not yet"


def test_a_binary_that_cannot_start_is_runner_error(tmp_path: Path) -> None:
    not_executable = tmp_path / "runner"
    not_executable.write_text("plain text")
    with pytest.raises(RunnerError, match="cannot start"):
        ChildProcess.start([str(not_executable)], tmp_path / "c.log", name="x")


def test_find_executable(tmp_path: Path) -> None:
    assert find_executable(None, "python3").endswith("python3")
    assert find_executable(sys.executable, "llama-server") == sys.executable
    with pytest.raises(RunnerNotFound, match="not on PATH"):
        find_executable(None, "surely-no-such-runner-binary")
    with pytest.raises(RunnerNotFound, match="not found or not executable"):
        find_executable(str(tmp_path / "nope"), "llama-server")


def test_log_tail_keeps_the_last_non_empty_lines(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n\n" for i in range(20)))
    assert read_log_tail(log, 3) == ["line 17", "line 18", "line 19"]
    assert read_log_tail(tmp_path / "missing.log") == []


def test_log_tail_leads_with_our_childs_error_line_when_the_server_logged_after_it(
    tmp_path: Path,
) -> None:
    log = tmp_path / "x.log"
    log.write_text(
        "error: the embedded runner could not start: bad model\n"
        + "".join(f"server line {i}\n" for i in range(5))
    )
    assert read_log_tail(log, 3) == [
        "error: the embedded runner could not start: bad model",
        "server line 2",
        "server line 3",
        "server line 4",
    ]
    assert read_log_tail(log, 6)[0] == "error: the embedded runner could not start: bad model"
    assert len(read_log_tail(log, 6)) == 6
