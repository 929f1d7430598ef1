"""Whether a process the tests started still runs (a zombie, exited but not reaped, does not)."""

from __future__ import annotations

import psutil


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone(pid: int) -> bool:
    return not alive(pid)
