"""Advisory whole-file locks that the kernel releases when their holder dies (even by kill -9).

`flock` on Linux and macOS. An OS without it is refused with the supported platforms named:
the model lock is what keeps a calibration and the lanes apart, and there is no safe stand-in.
"""

from __future__ import annotations

from .support import require_supported_platform


def try_lock(fd: int, *, exclusive: bool) -> bool:
    """Take the lock on open file `fd` without waiting; False when another holder has it.

    Closing the last descriptor of the open file releases it.
    """
    try:
        import fcntl
    except ImportError:
        require_supported_platform()
        raise
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
