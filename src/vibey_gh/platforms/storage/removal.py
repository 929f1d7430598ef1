"""Removing files from one folder, and only from that folder.

A folder named by a path can be swapped for a link between the moment it is checked and the
moment a file in it is removed. So the folder is opened once, without following a link, and
every removal is made relative to that open folder: a link put in its place afterwards leads
nowhere.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

_DIRECTORY_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class NotOwnFolder(OSError):
    """The folder is a link, or not the folder that was checked."""


def remove_from_folder(
    folder: Path, names: Iterable[str], expected: os.stat_result
) -> dict[str, str | None]:
    """Remove each name (a plain file name, no separator) from `folder`, which must still be
    the folder `expected` (its lstat when it was checked). Returns, per name, None when it
    was removed or why not. A link or anything but a regular file is left in place."""
    try:
        fd = os.open(folder, _DIRECTORY_FLAGS)
    except OSError as exc:
        raise NotOwnFolder(exc.errno, f"cannot open {folder} as a folder of its own") from None
    outcome: dict[str, str | None] = {}
    try:
        held = os.fstat(fd)
        if (held.st_dev, held.st_ino) != (expected.st_dev, expected.st_ino):
            raise NotOwnFolder(0, f"{folder} was replaced while it was read")
        for name in names:
            if os.sep in name or name in ("", ".", ".."):
                outcome[name] = "not a plain file name"
                continue
            try:
                mode = os.lstat(name, dir_fd=fd).st_mode
                if not stat.S_ISREG(mode):
                    outcome[name] = "no longer a regular file"
                    continue
                os.unlink(name, dir_fd=fd)
                outcome[name] = None
            except FileNotFoundError:
                outcome[name] = "removed meanwhile"
            except OSError as exc:
                outcome[name] = exc.strerror or str(exc)
    finally:
        os.close(fd)
    return outcome


__all__ = ["NotOwnFolder", "remove_from_folder"]
