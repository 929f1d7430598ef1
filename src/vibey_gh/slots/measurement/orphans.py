"""A calibration runner left behind by a crashed calibration (kill -9, power loss) is ours to
stop: its pid file names it, and it still holds the calibration port a rerun needs."""

from __future__ import annotations

from pathlib import Path

import psutil

from ...files import atomic_write_json
from ...guarded import MIB, loads_json, read_regular_text
from ...platforms.processes import stop_tree
from ...runners.registry import package_runner_modules

PID_FILE = "calibration-runner.json"


def remember_runner(path: Path, pid: int | None) -> None:
    if pid is None:
        return
    try:
        process = psutil.Process(pid)
        record = {"pid": pid, "create_time": process.create_time(), "cmdline": process.cmdline()}
    except psutil.Error:
        return
    atomic_write_json(path, record)


def forget_runner(path: Path) -> None:
    path.unlink(missing_ok=True)


def stop_orphaned_runner(path: Path, timeout_s: float = 10.0) -> int | None:
    """Stop the runner a previous calibration recorded, if that very process still runs.

    The pid alone is not enough (pids are reused): its start time and command line must match.
    Returns the pid stopped, or None.
    """
    try:
        record = loads_json(read_regular_text(path, limit=MIB))  # never blocks on a FIFO
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        forget_runner(path)
        return None
    try:
        process = psutil.Process(pid)
        same = abs(
            process.create_time() - float(record.get("create_time", 0))
        ) < 1.0 and process.cmdline() == record.get("cmdline")
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
