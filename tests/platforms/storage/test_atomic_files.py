"""A write that the disk refuses says which file: "File too large" or "No space left on
device" alone leaves a user guessing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vibey_gh.errors import error_line
from vibey_gh.platforms.storage.atomic_files import append_line_durably

OVER_THE_LIMIT = """
import resource, signal, sys
from pathlib import Path
from vibey_gh.errors import error_line
from vibey_gh.platforms.storage.atomic_files import atomic_write_bytes
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    atomic_write_bytes(Path(sys.argv[1]), b"x" * 5000)
except OSError as exc:
    print(error_line(exc)[0])
"""


def test_a_file_over_the_size_limit_is_named(tmp_path: Path) -> None:
    target = tmp_path / "evidence.json"
    done = subprocess.run(
        [sys.executable, "-c", OVER_THE_LIMIT, str(target)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert done.stdout.strip() == f"File too large ({target})", done.stderr
    assert not target.exists() and list(tmp_path.iterdir()) == []  # no temporary file left


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_disk_is_named(tmp_path: Path) -> None:
    log = tmp_path / "storm.log"
    log.symlink_to("/dev/full")  # every write to it fails as on a full disk
    with pytest.raises(OSError) as raised:
        append_line_durably(log, "a line")
    assert error_line(raised.value) == (f"No space left on device ({log})", 1)


def test_a_write_into_the_users_folder_leaves_that_folder_as_it_was(tmp_path: Path) -> None:
    from vibey_gh.platforms.storage.atomic_files import atomic_write_bytes

    folder = tmp_path / "work"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    atomic_write_bytes(folder / "corpus.json", b"{}")
    append_line_durably(folder / "log.jsonl", "{}")
    assert folder.stat().st_mode & 0o777 == 0o755
    assert (folder / "corpus.json").stat().st_mode & 0o777 == 0o600


def test_a_missing_folder_is_made_private(tmp_path: Path) -> None:
    from vibey_gh.platforms.storage.atomic_files import atomic_write_bytes

    atomic_write_bytes(tmp_path / "new" / "deeper" / "x.json", b"{}")
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "new" / "deeper").stat().st_mode & 0o777 == 0o700
