"""Who listens on a local TCP port: the process a port clash is named after.

psutil reads the socket tables (/proc/net/tcp on Linux, the kernel's on macOS). Another
user's process may hide its pid from us (macOS without privileges, Linux with hidepid); the
clash is then reported without a name rather than guessed.
"""

from __future__ import annotations

import msgspec
import psutil

COMMAND_SHOWN = 120  # characters of a holder's command line worth showing in one line


class PortHolder(msgspec.Struct, frozen=True):
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


class Listener(msgspec.Struct, frozen=True):
    """The process listening on a port, told apart from a later one by its start time."""

    pid: int
    create_time: float
    executable: str


def port_listener(port: int) -> Listener | None:
    """The process listening on TCP `port` and its executable file; None when the system does
    not tell (another user's process, no listener). Reads every socket of the machine: cache it
    and check it again with `still_running`."""
    holder = port_holder(port)
    if holder is None:
        return None
    try:
        process = psutil.Process(holder.pid)
        executable = process.exe()
        created = process.create_time()
    except (psutil.Error, OSError):
        return None
    return Listener(holder.pid, created, executable) if executable else None


def still_running(listener: Listener) -> bool:
    """Whether that very process (same pid, start time and executable) still runs: a few reads
    of its own, where finding the listener again reads every socket of the machine. A process
    keeps the port it listens on while it runs; when it ends, its pid no longer matches."""
    try:
        process = psutil.Process(listener.pid)
        started = abs(process.create_time() - listener.create_time) < 1.0
        return started and bool(process.exe() == listener.executable)
    except (psutil.Error, OSError):
        return False


def _command_of(pid: int) -> str:
    try:
        process = psutil.Process(pid)
        words = process.cmdline() or [process.name()]
    except (psutil.Error, OSError):
        return "command unknown"
    command = " ".join(words)
    return command if len(command) <= COMMAND_SHOWN else command[: COMMAND_SHOWN - 1] + "…"


__all__ = ["Listener", "PortHolder", "port_holder", "port_listener", "still_running"]
