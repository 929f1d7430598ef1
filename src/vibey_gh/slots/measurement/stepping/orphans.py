"""A calibration runner left behind by a crashed calibration (kill -9, power loss) is ours to
stop: its pid file names it, and it still holds the calibration port a rerun needs."""

from __future__ import annotations

from pathlib import Path

import msgspec
import psutil

from ....errors import MalformedJson
from ....files import atomic_write_json
from ....guarded import MIB, InputProblem, loads_json, read_regular_text
from ....interfaces.schema import as_json, checked
from ....platforms.process.processes import stop_tree
from ....runners.registry import package_runner_modules

PID_FILE = "calibration-runner.json"


class RunnerRecord(msgspec.Struct, frozen=True):
    """The pid file: which process a calibration started, told apart from a later process
    given the same pid by its start time and the command line it was launched with (None where
    a file lacks them)."""

    pid: int
    create_time: float | None = None
    # absent: a file from before the check, which then never matches a process
    cmdline: tuple[str, ...] | None = None

    def is_running_as(self, process: psutil.Process) -> bool:
        """Whether `process` is the very one recorded (pids are reused)."""
        if self.create_time is None or self.cmdline is None:
            return False
        # the start time is the boot time (whole seconds, moved by a clock step) plus the
        # ticks since boot: one second apart is the same start read across such a step
        started = abs(process.create_time() - self.create_time) < START_TOLERANCE_S
        return started and shows_launch(tuple(process.cmdline()), self.cmdline)


START_TOLERANCE_S = 2.0


def shows_launch(shown: tuple[str, ...], launched: tuple[str, ...]) -> bool:
    """Whether a process's command line is the one it was launched with. A script run through
    its #! line shows its interpreter first and the script's path in place of the name it was
    launched by; the arguments after it are ours unchanged."""
    if not launched or len(shown) < len(launched):
        return False
    if shown == launched:
        return True
    tail = shown[len(shown) - len(launched) :]
    return tail[1:] == launched[1:] and Path(tail[0]).name == Path(launched[0]).name


def read_runner_record(path: Path) -> RunnerRecord | None:
    """The recorded runner, or None: no file, or one that is not a pid file of ours."""
    try:
        return checked(loads_json(read_regular_text(path, limit=MIB)), RunnerRecord)
    except (OSError, InputProblem, MalformedJson):  # never blocks on a FIFO (guarded)
        return None


def remember_runner(path: Path, pid: int | None, argv: tuple[str, ...] | None) -> None:
    """Record the runner just started as `argv`. Its command line is the one we launched, never
    the one the process shows yet: right after the start the child may be mid-exec and show the
    parent's command line or none at all, and such a record would never match it again. The start
    time stays the fork's through the exec, so it may be read at once."""
    if pid is None or not argv:
        return
    try:
        record = RunnerRecord(pid, psutil.Process(pid).create_time(), tuple(argv))
    except psutil.Error:
        return
    atomic_write_json(path, as_json(record))


def forget_runner(path: Path) -> None:
    path.unlink(missing_ok=True)


def stop_orphaned_runner(path: Path, timeout_s: float = 10.0) -> int | None:
    """Stop the runner a previous calibration recorded, if that very process still runs.

    The pid alone is not enough (pids are reused): its start time and command line must match.
    Returns the pid stopped, or None.
    """
    record = read_runner_record(path)
    if record is None:
        forget_runner(path)
        return None
    pid = record.pid
    try:
        process = psutil.Process(pid)
        same = record.is_running_as(process)
    except psutil.Error:
        same = False
    if not same:
        forget_runner(path)
        return None
    tree = [process, *process.children(recursive=True)]
    stop_tree(tree, timeout_s)
    forget_runner(path)
    return pid


def stop_embedded_runner_on_port(port: int, timeout_s: float = 10.0) -> int | None:
    """Stop an embedded runner of ours that still listens on `port` (a crash can come between
    starting it and recording its pid). Only our own runner module is ever stopped here."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except psutil.Error:
        return None
    for conn in connections:
        if conn.status != psutil.CONN_LISTEN or not conn.laddr or conn.laddr.port != port:
            continue
        if conn.pid is None:
            continue
        try:
            process = psutil.Process(conn.pid)
            if not _orphaned_embedded_runner(process.cmdline()):
                return None
            process.terminate()
            try:
                process.wait(timeout_s)
            except psutil.TimeoutExpired:
                process.kill()
        except psutil.Error:
            return None
        return int(conn.pid)
    return None


def _orphaned_embedded_runner(cmdline: list[str]) -> bool:
    """Our embedded runner whose starter is gone (never a `runner serve` someone is using)."""
    ours = any(module in cmdline for module in package_runner_modules())
    if not ours or "--parent-pid" not in cmdline:
        return False
    try:
        parent = int(cmdline[cmdline.index("--parent-pid") + 1])
    except (IndexError, ValueError):
        return False
    return not psutil.pid_exists(parent)
