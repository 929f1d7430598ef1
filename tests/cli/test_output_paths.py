"""Every option that names a file or folder to write refuses, before any work, a target that
is not a place for its files: a device, a FIFO, a socket or a folder in the way, or a path in
/proc, /sys or /dev. One line, exit 2, and what was there is left as it was. (The gate's
`slots allowed --textfile` answers all the same, with a warning: its tests are with the
gate's, tests/cli/slots/test_allowed_always_answers.py.)"""

from __future__ import annotations

import os
import socket
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.fixtures import RunCli

# Each command is given inputs that would fail (or take long) if it got as far as using them,
# so a refusal that names the output option shows the check came first.
FILE_OPTIONS: dict[str, Callable[[str], list[str]]] = {
    "show --html": lambda target: ["slots", "show", "--fingerprint", "0" * 16, "--html", target],
    "corpus --out": lambda target: ["slots", "corpus", "--demo", "--out", target],
    "compare --plot": lambda target: ["slots", "compare", "no-such.json", "--plot", target],
    "runner serve --log": lambda target: [
        "runner",
        "serve",
        "--runner",
        "embedded",
        "--model",
        "no-such.gguf",
        "--log",
        target,
    ],  # fmt: skip
}
FOLDER_OPTIONS: dict[str, Callable[[str], list[str]]] = {
    "calibrate --out": lambda target: [
        "slots",
        "calibrate",
        "--corpus",
        "no-such.json",
        "--out",
        target,
    ],  # fmt: skip
}


@pytest.fixture
def specials() -> Iterator[dict[str, Path]]:
    """A FIFO, a socket, a folder, a link to a device, and a device, in a short folder (a
    socket's path must fit in about 100 bytes)."""
    with tempfile.TemporaryDirectory(prefix="out-") as folder:
        root = Path(folder)
        os.mkfifo(root / "fifo")
        (root / "folder").mkdir()
        (root / "file").write_text("keep me\n")
        (root / "to-device").symlink_to(os.devnull)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(root / "socket"))
        try:
            yield {
                "FIFO": root / "fifo",
                "socket": root / "socket",
                "folder": root / "folder",
                "regular file": root / "file",
                "link to a device": root / "to-device",
                "device": Path(os.devnull),
            }
        finally:
            server.close()


def mode_of(path: Path) -> int:
    return os.lstat(path).st_mode


@pytest.mark.parametrize("option", sorted(FILE_OPTIONS))
@pytest.mark.parametrize("kind", ["FIFO", "socket", "folder", "link to a device", "device"])
def test_a_file_option_refuses_what_is_not_a_regular_file(
    run_cli: RunCli, specials: dict[str, Path], option: str, kind: str
) -> None:
    target = specials[kind]
    before = mode_of(target)
    result = run_cli(FILE_OPTIONS[option](str(target)))
    assert result.exit_code == 2, result.output
    flag = option.split()[-1]
    assert result.stderr.startswith(f"error: {flag} {target}"), result.stderr
    assert "not a regular file" in result.stderr or "/dev" in result.stderr
    assert result.stderr.count("\n") == 1
    assert mode_of(target) == before  # still what it was, not replaced by a file
    assert sorted(p.name for p in target.parent.iterdir() if p.name.startswith(".tmp-")) == []


@pytest.mark.parametrize("option", sorted(FILE_OPTIONS) + sorted(FOLDER_OPTIONS))
@pytest.mark.parametrize("target", ["/proc/vibey-gh-out", "/sys/vibey-gh-out", "/dev/full"])
def test_an_output_in_a_kernel_file_system_is_refused(
    run_cli: RunCli, option: str, target: str
) -> None:
    command = {**FILE_OPTIONS, **FOLDER_OPTIONS}[option]
    result = run_cli(command(target))
    assert result.exit_code == 2, result.output
    root = "/" + target.split("/")[1]
    assert result.stderr == (
        f"error: {option.split()[-1]} {target} is in {root}, the kernel's, not a place for files\n"
    )


def test_a_link_into_proc_is_refused_too(run_cli: RunCli, tmp_path: Path) -> None:
    (tmp_path / "into-proc").symlink_to("/proc/self")
    result = run_cli(FILE_OPTIONS["corpus --out"](str(tmp_path / "into-proc" / "x")))
    assert result.exit_code == 2
    assert "is in /proc" in result.stderr


@pytest.mark.parametrize("kind", ["FIFO", "socket", "regular file"])
def test_calibrate_out_refuses_what_is_not_a_folder(
    run_cli: RunCli, specials: dict[str, Path], kind: str
) -> None:
    target = specials[kind]
    before = mode_of(target)
    result = run_cli(FOLDER_OPTIONS["calibrate --out"](str(target)))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: --out {target} is a ")
    assert result.stderr.rstrip().endswith("; name a folder")
    assert mode_of(target) == before
    assert (target.parent / "file").read_text() == "keep me\n"


def test_a_regular_file_is_still_replaced(run_cli: RunCli, tmp_path: Path) -> None:
    target = tmp_path / "gauges.prom"
    target.write_text("old\n")
    result = run_cli(["slots", "allowed", "--textfile", str(target)])
    assert result.exit_code == 0, result.output
    assert stat.S_ISREG(mode_of(target)) and "vibey_gh_slots_allowed" in target.read_text()
