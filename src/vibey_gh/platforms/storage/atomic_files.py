"""Atomic, private file writes: the OS calls behind every file the tool writes.

Every write goes through `atomic_write_*`: a temporary file in the same folder, fsync, rename
over the target, fsync of the folder. A crash leaves either the old file or the new one, never
half of one. Folders are 0700 and files 0600: evidence names the machine. "fsync" here is
`durability`'s: on macOS that is F_FULLFSYNC, the only call that makes a write survive a power
cut there. `vibey_gh.files` adds canonical JSON, hashing and schema-checked reads on top, and
is what the rest of the package imports; within `platforms` (locks, parallelism settings) this
module is used directly, so the arrow runs from `files` to `platforms` only.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ...errors import BadInput
from ...guarded import kind_of
from .durability import fsync_directory, fsync_durably

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
TEMP_PREFIX = ".tmp-"
_CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) as 0700 whatever the umask; tighten `path` itself
    if it is ours, too open, and a folder rather than a link to one (a state folder). Parents
    that already exist are left as they are."""
    make_private_parents(path)
    with contextlib.suppress(PermissionError):
        info = os.lstat(path)  # a link is left alone: tightening it would change its target
        if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o077:
            path.chmod(PRIVATE_DIR)
    return path


def make_private_parents(path: Path) -> Path:
    """Create the folders of `path` that are missing, each 0700 whatever the umask; a folder
    that already exists is never changed: a file written into the user's own folder (`--out
    ./corpus.json`) must not make that folder private."""
    missing: list[Path] = []
    probe = path
    while not probe.is_dir() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            if not folder.is_dir():
                raise NotADirectoryError(20, "Not a directory", str(folder)) from None
            continue
        # mkdir's mode is filtered by the umask (0o700 under umask 077 stays; under 0o277 not)
        with contextlib.suppress(PermissionError):
            folder.chmod(PRIVATE_DIR)
    return path


def _create_temp_beside(path: Path) -> tuple[int, Path]:
    # A fresh name opened with O_EXCL, as tempfile.mkstemp does; tempfile itself is not imported
    # because it pulls in shutil, random and the compression modules, a real share of the
    # `slots allowed` budget.
    while True:
        tmp = path.parent / f"{TEMP_PREFIX}{path.name[:64]}.{os.urandom(6).hex()}.part"
        try:
            return os.open(tmp, _CREATE_NEW, PRIVATE_FILE), tmp
        except FileExistsError:
            continue


def atomic_write_bytes(path: Path, data: bytes, mode: int = PRIVATE_FILE) -> None:
    """Write `data` to `path` atomically with permissions `mode`."""
    make_private_parents(path.parent)
    _replace_atomically(path, data, mode)


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """An OS error of a write names no file ("File too large", "No space left on device"):
    name the file being written, so the one line a user reads says which."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, str(path)) from exc


def _replace_atomically(path: Path, data: bytes, mode: int) -> None:
    """Temporary file beside `path` (private until complete), durable, renamed over `path`."""
    with _naming(path):
        _write_and_rename(path, data, mode)


def _write_and_rename(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = _create_temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            fsync_durably(handle.fileno())
            os.fchmod(handle.fileno(), mode)
        _refuse_replacing_special(path)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    fsync_directory(path.parent)


def _refuse_replacing_special(path: Path) -> None:
    """The rename replaces whatever has the name: never let that be a device node, a FIFO or
    a socket (a link is replaced itself, never what it points to)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise BadInput(f"{path} is {kind_of(mode)}, not a regular file; not replaced")


def atomic_write_text(path: Path, text: str, mode: int = PRIVATE_FILE) -> None:
    atomic_write_bytes(path, utf8(text), mode)


def utf8(text: str) -> bytes:
    """`text` as UTF-8. A lone surrogate, which a JSON string can carry (`"\\ud800"`, say in a
    runner's reply) but UTF-8 cannot, is written as that same escape: JSON text reads back
    equal, and valid text is encoded exactly as by `str.encode`."""
    return text.encode("utf-8", errors="backslashreplace")


def append_line_durably(path: Path, line: str) -> None:
    """Append one line and fsync it, so a crash loses at most the line in flight."""
    make_private_parents(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    try:
        with _naming(path):
            os.write(fd, utf8(line.rstrip("\n") + "\n"))
            fsync_durably(fd)
    finally:
        os.close(fd)


def leftover_temp_files(folder: Path) -> Iterator[Path]:
    """Temporary files a crash left behind in `folder` (never the finished files)."""
    if folder.is_dir():
        yield from folder.glob(f"{TEMP_PREFIX}*")


def atomic_write_shared_text(path: Path, text: str, mode: int) -> None:
    atomic_write_shared_bytes(path, utf8(text), mode)


def atomic_write_shared_bytes(path: Path, data: bytes, mode: int) -> None:
    """Write `data` atomically into a folder the user named or someone else owns (a report's
    destination, a collector's textfile folder): the folder must exist and is neither created
    nor tightened, and `mode` may let others read. The temporary file starts private and is
    opened up only once it is complete."""
    _replace_atomically(path, data, mode)
