"""Durable writes: data on stable storage before the caller goes on.

On Linux `fsync` is enough. On macOS it is not: `fsync` hands the data to the drive, whose own
cache may still lose it in a power cut or a forced reboot; only `fcntl(fd, F_FULLFSYNC)` asks
the drive to flush that cache too. Evidence, checkpoints, requests and lane records are the
files a reboot must not lose, so every write the tool makes durable comes through here.

A filesystem that refuses F_FULLFSYNC (network and some FUSE filesystems answer ENOTSUP or
EINVAL) still gets a plain fsync, as SQLite does.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

FCNTL: ModuleType | None
try:
    import fcntl as FCNTL
except ImportError:  # an OS without fcntl: fsync is all there is
    FCNTL = None
# What a filesystem without F_FULLFSYNC answers.
REFUSALS = frozenset({errno.ENOTSUP, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOTTY})


def fsync_durably(
    fd: int,
    fcntl_module: ModuleType | None = FCNTL,
    fsync: Callable[[int], None] = os.fsync,
) -> None:
    """Flush `fd` to stable storage: F_FULLFSYNC where the fcntl module has it, else fsync."""
    full_fsync = getattr(fcntl_module, "F_FULLFSYNC", None)
    if fcntl_module is not None and full_fsync is not None:
        try:
            fcntl_module.fcntl(fd, full_fsync)
            return
        except OSError as exc:
            # A refusal means this filesystem cannot flush the drive's cache: fsync is the best
            # left. Any other error (EIO) is a write that failed, and is the caller's to see.
            if exc.errno not in REFUSALS:
                raise
    fsync(fd)


def fsync_directory(
    path: Path,
    fcntl_module: ModuleType | None = FCNTL,
    fsync: Callable[[int], None] = os.fsync,
) -> None:
    """Make the entries of folder `path` durable (a rename or a new file in it).

    Where a folder cannot be opened as a file (no O_DIRECTORY: Windows) there is nothing to
    flush this way, and the call does nothing.
    """
    directory_flag = getattr(os, "O_DIRECTORY", None)
    if directory_flag is None:
        return
    fd = os.open(path, os.O_RDONLY | directory_flag)
    try:
        fsync_durably(fd, fcntl_module, fsync)
    finally:
        os.close(fd)
