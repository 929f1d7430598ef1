"""Paths that belong to the system, not to the user: where no output goes, what no lane reads.

* Kernel file systems (`/proc` and `/sys` on Linux, `/dev` on Linux and macOS): a "file" there
  is a view of the kernel or a device. Writing one is never what an option that names an output
  file means, and renaming a finished file over a device node replaces the node.
* System folders: the root folder, the operating system's own folders and the home folder
  itself. A lane whose repository is one of them lets its model read every file the user can.
  A folder inside them (`/usr/src/project`, `~/code/app`) is the user's choice and is allowed.

Paths are judged as written (made absolute) and with every link resolved, so neither a link
to `/dev/full` nor `/proc/self/../../dev/full` gets through. `check_output_file` and
`check_output_folder` are the one check every option that names an output runs before any
work.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...errors import BadInput
from ...guarded import kind_of

KERNEL_FILESYSTEMS = ("/proc", "/sys", "/dev")
SYSTEM_FOLDERS = frozenset(
    {
        "/",
        *KERNEL_FILESYSTEMS,
        # Linux (the Filesystem Hierarchy Standard)
        *("/bin", "/boot", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media"),
        *("/mnt", "/opt", "/root", "/run", "/sbin", "/srv", "/tmp", "/usr", "/var"),
        *("/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin", "/usr/share", "/var/lib"),
        # macOS
        *("/Applications", "/Library", "/System", "/Users", "/Volumes", "/private"),
        *("/private/etc", "/private/tmp", "/private/var", "/cores"),
    }
)


def _seen_as(path: Path) -> set[str]:
    """`path` made absolute as written, and with every link resolved."""
    return {os.path.normpath(os.path.abspath(path)), os.path.realpath(path)}


def kernel_filesystem_of(path: Path) -> str | None:
    """The kernel file system (`/proc`, `/sys`, `/dev`) that `path` is in, or None."""
    for candidate in _seen_as(path):
        for root in KERNEL_FILESYSTEMS:
            if candidate == root or candidate.startswith(root + "/"):
                return root
    return None


def system_folder_of(path: Path, home: Path | None = None) -> str | None:
    """Which system folder `path` is (itself, not a folder inside it), or None: the root, an
    operating system folder, the home folder `home` (default: this user's), or anything in a
    kernel file system."""
    kernel = kernel_filesystem_of(path)
    if kernel is not None:
        return kernel
    homes = _seen_as(home) if home is not None else _this_users_home()
    for candidate in _seen_as(path):
        if candidate in SYSTEM_FOLDERS:
            return candidate
        if candidate in homes:
            return f"{candidate} (the home folder)"
    return None


def _this_users_home() -> set[str]:
    try:
        return _seen_as(Path.home())
    except (RuntimeError, KeyError):  # no HOME and no password entry: no home folder to refuse
        return set()


def check_output_file(path: Path, option: str) -> None:
    """Refuse, before any work, a file the user named with `option` for the tool to write: one
    in a kernel file system (/proc, /sys, /dev), or one that exists and is not a regular file
    (a device, a FIFO, a socket, a folder). One line, BadInput (exit 2)."""
    mode = _output_mode(path, option)
    if mode is not None and not stat.S_ISREG(mode):
        raise BadInput(f"{option} {path} is {kind_of(mode)}, not a regular file; name a file")


def check_new_output_file(path: Path, option: str) -> None:
    """As `check_output_file`, and refused as well when the folder it goes in does not exist
    (a file written beside others, never its folders made for it)."""
    check_output_file(path, option)
    if not path.parent.is_dir():
        raise BadInput(f"{option} {path}: no such folder {path.parent}")


def check_output_folder(path: Path, option: str) -> None:
    """As `check_output_file`, for a folder the tool writes its files into."""
    mode = _output_mode(path, option)
    if mode is not None and not stat.S_ISDIR(mode):
        raise BadInput(f"{option} {path} is {kind_of(mode)}; name a folder")


def _output_mode(path: Path, option: str) -> int | None:
    """The st_mode of what `path` names now (links followed), None when nothing is there."""
    kernel = kernel_filesystem_of(path)
    if kernel is not None:
        raise BadInput(f"{option} {path} is in {kernel}, the kernel's, not a place for files")
    try:
        return os.stat(path).st_mode
    except OSError:
        return None  # missing, under a file, or not visible to us: the caller or the write says
