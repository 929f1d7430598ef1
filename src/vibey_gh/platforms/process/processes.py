"""Process groups and sessions: a runner and everything it starts, stopped as one.

A runner starts in a session of its own, so its process group id is its pid and a signal to
that group reaches whatever it started in turn (Ollama starts llama-server or a runner). POSIX
calls, the same on Linux and macOS.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil


def start_in_own_group(
    argv: Sequence[str],
    output_fd: int,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start `argv` (no shell) in a new session, stdin empty, stdout and stderr to `output_fd`."""
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=output_fd,
        stderr=subprocess.STDOUT,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=True,
    )


def process_group_of(pid: int) -> int:
    """The process group of `pid` (raises ProcessLookupError when it is gone)."""
    return os.getpgid(pid)


def signal_process_group(group: int, sig: signal.Signals) -> None:
    """Send `sig` to every member of process group `group`; a group that is gone, or not ours
    to signal, is left alone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (it may belong to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_tree(tree: Sequence[Any], grace_s: float) -> None:
    """Terminate every psutil.Process of `tree`, wait up to `grace_s`, kill what is left.
    Processes that are already gone are passed over."""
    for member in tree:
        with contextlib.suppress(psutil.Error):
            member.terminate()
    _, alive = psutil.wait_procs(tree, timeout=grace_s)
    for member in alive:
        with contextlib.suppress(psutil.Error):
            member.kill()
