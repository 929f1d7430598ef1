"""Who listens on a local TCP port: the process a port clash is named after.

psutil reads the socket tables (/proc/net/tcp on Linux, the kernel's on macOS). Another
user's process may hide its pid from us (macOS without privileges, Linux with hidepid); the
clash is then reported without a name rather than guessed.
"""

from __future__ import annotations

from pathlib import Path

import psutil

from ...interfaces.values import frozen_value

COMMAND_SHOWN = 120  # characters of a holder's command line worth showing in one line


@frozen_value
class PortHolder:
    """A process listening on a port: its pid and its command line (or name)."""

    pid: int
    command: str

    def describe(self) -> str:
        return f"pid {self.pid} ({self.command})"


def port_holder(port: int) -> PortHolder | None:
    """The process listening on TCP `port`, when the system tells us; None otherwise."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.Error, OSError):
        return None
    for conn in connections:
        if conn.status != psutil.CONN_LISTEN or not conn.laddr or conn.laddr.port != port:
            continue
        if conn.pid is None:
            return None
        return PortHolder(conn.pid, _command_of(conn.pid))
    return None


def listener_executable(port: int) -> Path | None:
    """The executable file of the process listening on TCP `port`; None when the system does
    not tell (another user's process, no listener)."""
    holder = port_holder(port)
    if holder is None:
        return None
    try:
        executable = psutil.Process(holder.pid).exe()
    except (psutil.Error, OSError):
        return None
    return Path(executable) if executable else None


def _command_of(pid: int) -> str:
    try:
        process = psutil.Process(pid)
        words = process.cmdline() or [process.name()]
    except (psutil.Error, OSError):
        return "command unknown"
    command = " ".join(words)
    return command if len(command) <= COMMAND_SHOWN else command[: COMMAND_SHOWN - 1] + "…"


__all__ = ["PortHolder", "listener_executable", "port_holder"]
