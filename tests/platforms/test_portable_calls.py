"""No standard-library call outside platforms/ that CPython lacks on macOS or on Linux.

The table names what CPython's documentation gives as Linux-only (or missing where the C
library lacks it: macOS has no sigtimedwait, sigwaitinfo, pipe2, posix_fadvise, …) and what
exists only on macOS and the BSDs. Such a call belongs behind a seam in platforms/, with the
other system's way beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from source_scan import source_files, uses_in, uses_in_source

NOT_ON_MACOS = "not on macOS"
NOT_ON_LINUX = "not on Linux"

UNAVAILABLE = {
    # signal
    "signal.sigtimedwait": NOT_ON_MACOS,
    "signal.sigwaitinfo": NOT_ON_MACOS,
    "signal.pidfd_send_signal": NOT_ON_MACOS,
    "signal.SIGRTMIN": NOT_ON_MACOS,
    "signal.SIGRTMAX": NOT_ON_MACOS,
    # os: Linux system calls
    "os.pipe2": NOT_ON_MACOS,
    "os.memfd_create": NOT_ON_MACOS,
    "os.eventfd": NOT_ON_MACOS,
    "os.eventfd_read": NOT_ON_MACOS,
    "os.eventfd_write": NOT_ON_MACOS,
    "os.timerfd_create": NOT_ON_MACOS,
    "os.pidfd_open": NOT_ON_MACOS,
    "os.getrandom": NOT_ON_MACOS,
    "os.copy_file_range": NOT_ON_MACOS,
    "os.splice": NOT_ON_MACOS,
    "os.unshare": NOT_ON_MACOS,
    "os.setns": NOT_ON_MACOS,
    "os.getxattr": NOT_ON_MACOS,
    "os.setxattr": NOT_ON_MACOS,
    "os.listxattr": NOT_ON_MACOS,
    "os.removexattr": NOT_ON_MACOS,
    "os.posix_fadvise": NOT_ON_MACOS,
    "os.posix_fallocate": NOT_ON_MACOS,
    "os.sched_setaffinity": NOT_ON_MACOS,
    "os.sched_getaffinity": NOT_ON_MACOS,
    "os.sched_setscheduler": NOT_ON_MACOS,
    "os.sched_getscheduler": NOT_ON_MACOS,
    "os.sched_setparam": NOT_ON_MACOS,
    "os.sched_getparam": NOT_ON_MACOS,
    "os.sched_rr_get_interval": NOT_ON_MACOS,
    "os.getresuid": NOT_ON_MACOS,
    "os.getresgid": NOT_ON_MACOS,
    "os.setresuid": NOT_ON_MACOS,
    "os.setresgid": NOT_ON_MACOS,
    "os.waitid": NOT_ON_MACOS + " before Python 3.13",
    "os.O_DIRECT": NOT_ON_MACOS,
    "os.O_PATH": NOT_ON_MACOS,
    "os.O_TMPFILE": NOT_ON_MACOS,
    "os.O_NOATIME": NOT_ON_MACOS,
    "time.CLOCK_BOOTTIME": NOT_ON_MACOS,
    "time.pthread_getcpuclockid": NOT_ON_MACOS,
    "select.epoll": NOT_ON_MACOS,
    "resource.prlimit": NOT_ON_MACOS,
    # macOS (and the BSDs) only
    "fcntl.F_FULLFSYNC": NOT_ON_LINUX,
    "fcntl.F_BARRIERFSYNC": NOT_ON_LINUX,
    "fcntl.F_NOCACHE": NOT_ON_LINUX,
    "fcntl.F_GETPATH": NOT_ON_LINUX,
    "select.kqueue": NOT_ON_LINUX,
    "select.kevent": NOT_ON_LINUX,
    "time.CLOCK_UPTIME_RAW": NOT_ON_LINUX,
    "os.lchflags": NOT_ON_LINUX,
    "os.chflags": NOT_ON_LINUX,
}


def unportable(uses: list) -> list[str]:
    return [f"{use.where()} ({UNAVAILABLE[use.name]})" for use in uses if use.name in UNAVAILABLE]


def test_nothing_outside_platforms_calls_what_macos_or_linux_lacks() -> None:
    offenders = [
        line for path in source_files(outside_platforms=True) for line in unportable(uses_in(path))
    ]
    assert offenders == [], "move these behind platforms/:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "source",
    [
        "import signal\nsignal.sigtimedwait({15}, 1.0)\n",
        "from signal import sigtimedwait\n",
        "import signal as s\nwhile s.sigtimedwait({15}, 1.0) is None: pass\n",
        "import signal\nwait = getattr(signal, 'sigtimedwait')\n",
    ],
)
def test_the_scan_finds_a_call_however_it_is_written(source: str) -> None:
    found = unportable(list(uses_in_source(source, Path(__file__))))
    assert len(found) == 1
    assert found[0].endswith(": signal.sigtimedwait (not on macOS)")
    assert "tests/platforms/test_portable_calls.py:" in found[0]  # file and line
