"""Durable writes: F_FULLFSYNC where the fcntl module has it (macOS), fsync otherwise."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from types import ModuleType

import pytest

from vibey_gh.files import append_line_durably, atomic_write_text
from vibey_gh.platforms.storage import durability
from vibey_gh.platforms.storage.durability import fsync_directory, fsync_durably
from vibey_gh.platforms.support import this_platform

# The value macOS's <sys/fcntl.h> gives F_FULLFSYNC.
MACOS_F_FULLFSYNC = 51


class RecordingFcntl(ModuleType):
    """The part of the fcntl module fsync_durably uses, recording each call."""

    def __init__(self, calls: list[tuple[str, int, int | None]], refuse: int | None = None):
        super().__init__("fcntl")
        self.F_FULLFSYNC = MACOS_F_FULLFSYNC
        self.calls = calls
        self.refuse = refuse

    def fcntl(self, fd: int, command: int) -> int:
        self.calls.append(("fcntl", fd, command))
        if self.refuse is not None:
            raise OSError(self.refuse, os.strerror(self.refuse))
        return 0


def recorder() -> tuple[list[tuple[str, int, int | None]], object]:
    calls: list[tuple[str, int, int | None]] = []
    return calls, lambda fd: calls.append(("fsync", fd, None))


def test_where_f_fullfsync_exists_it_is_the_call_and_fsync_is_not() -> None:
    calls, fsync = recorder()
    fsync_durably(7, RecordingFcntl(calls), fsync)  # type: ignore[arg-type]
    assert calls == [("fcntl", 7, MACOS_F_FULLFSYNC)]


@pytest.mark.parametrize("refusal", [errno.ENOTSUP, errno.EINVAL, errno.ENOTTY])
def test_a_filesystem_that_refuses_f_fullfsync_still_gets_fsync(refusal: int) -> None:
    calls, fsync = recorder()
    fsync_durably(7, RecordingFcntl(calls, refuse=refusal), fsync)  # type: ignore[arg-type]
    assert calls == [("fcntl", 7, MACOS_F_FULLFSYNC), ("fsync", 7, None)]


def test_a_failed_flush_is_not_hidden_behind_fsync() -> None:
    calls, fsync = recorder()
    with pytest.raises(OSError) as caught:
        fsync_durably(7, RecordingFcntl(calls, refuse=errno.EIO), fsync)  # type: ignore[arg-type]
    assert caught.value.errno == errno.EIO
    assert calls == [("fcntl", 7, MACOS_F_FULLFSYNC)]


def test_an_fcntl_without_f_fullfsync_or_no_fcntl_at_all_means_fsync() -> None:
    calls, fsync = recorder()
    linux_like = ModuleType("fcntl")
    fsync_durably(3, linux_like, fsync)  # type: ignore[arg-type]
    fsync_durably(4, None, fsync)  # type: ignore[arg-type]
    assert calls == [("fsync", 3, None), ("fsync", 4, None)]


def test_a_folder_is_opened_as_a_folder_and_flushed_the_same_way(tmp_path: Path) -> None:
    calls, fsync = recorder()
    fsync_directory(tmp_path, RecordingFcntl(calls), fsync)  # type: ignore[arg-type]
    ((call, fd, command),) = calls
    assert (call, command) == ("fcntl", MACOS_F_FULLFSYNC)
    with pytest.raises(OSError):
        os.fstat(fd)  # it was closed after the flush
    (tmp_path / "file").touch()
    with pytest.raises(NotADirectoryError):
        fsync_directory(tmp_path / "file")


def test_this_machine_s_fcntl_decides_and_real_files_are_flushed(tmp_path: Path) -> None:
    import fcntl

    assert durability.FCNTL is fcntl
    assert hasattr(fcntl, "F_FULLFSYNC") == (this_platform() == "darwin")
    target = tmp_path / "evidence.json"
    atomic_write_text(target, "{}\n")
    append_line_durably(tmp_path / "events.jsonl", '{"event": "start"}')
    assert target.read_text() == "{}\n"
    assert (tmp_path / "events.jsonl").read_text() == '{"event": "start"}\n'


@pytest.mark.macos
@pytest.mark.skipif(this_platform() != "darwin", reason="runs only on macOS")
def test_live_mac_flushes_the_drive_s_cache_with_f_fullfsync(tmp_path: Path) -> None:
    calls, fsync = recorder()
    fd = os.open(tmp_path / "evidence.json", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.write(fd, b"{}\n")
        fsync_durably(fd, fsync=fsync)  # type: ignore[arg-type]
    finally:
        os.close(fd)
    assert calls == []  # APFS accepts F_FULLFSYNC: plain fsync was not needed
