"""Child-process lifecycle shared by every runner: start, wait until ready, stop with no leftovers.

A runner is a server in a child process of its own. It gets its own process group, so stopping
it reaches whatever it started in turn (Ollama starts llama-server or a runner). Its stdout and
stderr are appended to one log file that the log scanner reads while it runs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import BadInput, RunnerError, RunnerNotFound
from ..files import PRIVATE_FILE, ensure_private_dir
from ..platforms.process.commands import run_captured
from ..platforms.process.ports import port_holder
from ..platforms.process.processes import process_group_of, signal_process_group, start_in_own_group

LOOPBACK = "127.0.0.1"
# a sweep starts a runner for every step: a simulated one is up in a tenth of a second, and
# polling its health each 0.2 s added up to that again on every step
READY_POLL_S = 0.05
STOP_GRACE_S = 15.0
TAIL_LINES = 8


def unused_loopback_port() -> int:
    """A port the kernel has no use for now, for a runner that binds it a moment later."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
    return port


def ensure_port_free(port: int, host: str = LOOPBACK, what_to_do: str | None = None) -> None:
    """Raise BadInput when something already listens on host:port, naming the process that
    holds it when the system tells, and `what_to_do` about it.

    Two checks, because neither alone is enough: a connect finds a listener bound to any
    address (which a SO_REUSEADDR bind on macOS would not notice), and a bind finds a port held
    without a listener yet. SO_REUSEADDR keeps TIME_WAIT leftovers of the previous step from
    counting as "in use".
    """
    if not 0 < port < 65536:
        raise BadInput(f"port {port} is not between 1 and 65535")
    taken = _port_taken(port, host, what_to_do)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        if probe.connect_ex((host, port)) == 0:
            raise taken
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise taken from None
            if exc.errno == errno.EACCES:
                raise BadInput(f"port {port} on {host} needs privileges this user lacks") from None
            raise RunnerError(f"cannot check port {port} on {host}: {exc.strerror}") from None


def _port_taken(port: int, host: str, what_to_do: str | None) -> BadInput:
    holder = port_holder(port)
    by = f" by {holder.describe()}" if holder is not None else ""
    advice = f"; {what_to_do}" if what_to_do else ""
    return BadInput(f"port {port} on {host} is already in use{by}{advice}")


def find_executable(configured: str | None, default_name: str) -> str:
    """The configured executable (a path or a name on PATH), else `default_name` on PATH."""
    wanted = configured or default_name
    path = Path(wanted).expanduser()
    if os.sep in wanted and path.is_file() and os.access(path, os.X_OK):
        return str(path)
    found = shutil.which(wanted)
    if found:
        return found
    if configured:
        raise RunnerNotFound(f"{default_name} binary not found or not executable: {configured}")
    raise RunnerNotFound(
        f"{default_name} is not on PATH; install it or set [local_models] runner_binary to its path"
    )


def read_log_tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    """The last `lines` non-empty lines of a log, for error messages (never raises); the last
    line our own child wrote as `error: …` leads them when it is older than the tail, because a
    server's log thread may still be flushing its own lines after it (the order varies)."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 16384))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    written = [line for line in text.splitlines() if line.strip()]
    tail = written[-lines:]
    own_errors = [line for line in written[:-lines] if line.startswith("error:")]
    return own_errors[-1:] + tail


def _open_log(path: Path) -> int:
    ensure_private_dir(path.parent)
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)


class ChildProcess:
    """One runner process: its own process group, output appended to `log_path`."""

    def __init__(
        self, popen: subprocess.Popen[bytes], log_path: Path, name: str, argv: Sequence[str] = ()
    ) -> None:
        self._popen = popen
        self.argv = tuple(argv)
        self.log_path = log_path
        self.name = name
        self._stopped = False

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        log_path: Path,
        *,
        name: str,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> ChildProcess:
        """Start `argv` (no shell) in a new session; raise RunnerError if it cannot start."""
        log_fd = _open_log(log_path)
        try:
            popen = start_in_own_group(argv, log_fd, env=env, cwd=cwd)
        except OSError as exc:
            raise RunnerError(f"cannot start {name} ({argv[0]}): {exc.strerror or exc}") from None
        finally:
            os.close(log_fd)
        return cls(popen, log_path, name, argv)

    @property
    def pid(self) -> int:
        return self._popen.pid

    def exit_code(self) -> int | None:
        """None while it runs."""
        return self._popen.poll()

    def log_tail(self, lines: int = TAIL_LINES) -> list[str]:
        return read_log_tail(self.log_path, lines)

    def died_error(self, while_doing: str) -> RunnerError:
        code = self._popen.poll()
        tail = "\n  ".join(self.log_tail()) or "(the log is empty)"
        return RunnerError(
            f"{self.name} exited with code {code} {while_doing}; "
            f"last lines of {self.log_path}:\n  {tail}"
        )

    def wait_ready(
        self,
        is_ready: Callable[[], bool],
        timeout_s: float,
        clock: Clock = SYSTEM_CLOCK,
    ) -> float:
        """Poll `is_ready` until it is true; return the seconds waited.

        Fails fast, with the log's last lines, when the child exits first. On failure the child
        is stopped: a runner that never became ready is of no use to anyone.
        """
        started = clock.monotonic()
        deadline = started + timeout_s
        while True:
            if self.exit_code() is not None:
                error = self.died_error("before it was ready")
                self.stop()
                raise error
            if is_ready():
                return clock.monotonic() - started
            if clock.monotonic() >= deadline:
                self.stop()
                tail = "\n  ".join(self.log_tail()) or "(the log is empty)"
                raise RunnerError(
                    f"{self.name} was not ready after {timeout_s:g}s; "
                    f"last lines of {self.log_path}:\n  {tail}"
                )
            clock.sleep(READY_POLL_S)

    def _tree(self) -> list[Any]:
        """The child, its descendants, and the rest of its process group (members whose parent
        already died are no longer its descendants, but still its group's)."""
        found: dict[int, Any] = {}
        try:
            root = psutil.Process(self.pid)
            for proc in [root, *root.children(recursive=True)]:
                found[proc.pid] = proc
        except psutil.Error:
            pass
        for proc in psutil.process_iter():
            with contextlib.suppress(psutil.Error, OSError):
                if proc.pid not in found and process_group_of(proc.pid) == self.pid:
                    found[proc.pid] = proc
        return list(found.values())

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM the group, wait `grace_s`, then SIGKILL whatever of the tree is left.

        Descendants are listed before signalling, so one that left the process group (a
        grandchild that called setsid) is still reached.
        """
        if self._stopped:
            return
        tree = self._tree()
        self._signal_group(signal.SIGTERM)
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                proc.terminate()
        _gone, alive = psutil.wait_procs(tree, timeout=grace_s)
        if alive:
            self._signal_group(signal.SIGKILL)
            for proc in alive:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            _gone, alive = psutil.wait_procs(alive, timeout=5.0)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout=5.0)
        self._stopped = True
        if alive:
            pids = ", ".join(str(p.pid) for p in alive)
            raise RunnerError(f"{self.name}: processes {pids} survived SIGKILL")

    def _signal_group(self, sig: signal.Signals) -> None:
        # The group id is the child's pid (start_new_session); it outlives the leader while any
        # member lives, so this works even after the leader exited.
        signal_process_group(self.pid, sig)


class ChildServer:
    """A started runner whose server is a child process of its own (`_child`): its pid,
    command line and exit code are the child's."""

    _child: ChildProcess

    @property
    def pid(self) -> int | None:
        return self._child.pid

    @property
    def argv(self) -> tuple[str, ...] | None:
        return self._child.argv

    def exit_code(self) -> int | None:
        """None while the runner's process runs."""
        return self._child.exit_code()


# A binary's version, read without starting a server: what a calibration compares with
# production before its first step (a mismatch is refused then, not after hours of sweeping).
VERSION_TIMEOUT_S = 30.0


def run_version_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """stdout and stderr of a `--version` call; RunnerError when it cannot run or fails."""
    try:
        done = run_captured(argv, VERSION_TIMEOUT_S, env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunnerError(f"`{' '.join(argv)}` could not run: {exc}") from None
    output = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        last = [line for line in output.splitlines() if line.strip()][-1:] or ["no output"]
        raise RunnerError(f"`{' '.join(argv)}` exited {done.returncode}: {last[0]}")
    return output
