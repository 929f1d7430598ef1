"""Advisory whole-file locks that the kernel releases when their holder dies (even by kill -9).

`flock` on Linux and macOS. An OS without it is refused with the supported platforms named:
the model lock is what keeps a calibration and the lanes apart, and there is no safe stand-in.

A lock file is opened without following links, neither the file's name nor its folder's
(`open_lock_file`): a link planted in `locks/` must not make the tool create or open a file
outside the state dir. That takes O_NOFOLLOW and O_DIRECTORY (CPython: "Availability: Unix",
both on Linux and macOS) and `os.open`'s `dir_fd` (in `os.supports_dir_fd` on both): the
folder is opened first, refusing a link, and the file is opened inside that very folder, so a
link swapped in between cannot redirect it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ...errors import Refused
from ..support import require_supported_platform
from .atomic_files import ensure_private_dir

try:
    import fcntl
except ImportError:  # an OS without flock: taking a lock says the platform is unsupported
    FLOCK_MISSING = True
else:
    FLOCK_MISSING = False

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# ELOOP: the name is a link (Linux, macOS); EMLINK: the same, as FreeBSD says it; ENOTDIR: a
# link (or a file) where the folder should be, under O_DIRECTORY.
_A_LINK = {errno.ELOOP, errno.EMLINK, errno.ENOTDIR}


def open_lock_file(path: Path, mode: int) -> int:
    """Open (creating with `mode`, and its folder private) the lock file `path` for reading and
    writing; Refused, in one line, when `path` or its folder is a link, or `path` is not a
    regular file. A linked folder is refused before anything is made or tightened through it."""
    if path.parent.is_symlink():
        raise Refused(_refusal(path.parent, "folder"))
    ensure_private_dir(path.parent)
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        if exc.errno in _A_LINK:
            raise Refused(_refusal(path.parent, "folder")) from None
        raise
    try:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
        fd = os.open(path.name, flags, mode, dir_fd=folder)
    except OSError as exc:
        if exc.errno in _A_LINK:
            raise Refused(_refusal(path, "file")) from None
        raise
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused(_refusal(path, "file"))
    return fd


def _refusal(path: Path, what: str) -> str:
    return (
        f"the lock {what} {path} is a link or not a regular {what}; locks are never taken "
        "through links out of the state dir (remove it, and it is made again)"
    )


def try_lock(fd: int, *, exclusive: bool) -> bool:
    """Take the lock on open file `fd` without waiting; False when another holder has it.

    Closing the last descriptor of the open file releases it.
    """
    if FLOCK_MISSING:
        require_supported_platform()
        raise OSError(errno.ENOSYS, "this OS has no flock")
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
