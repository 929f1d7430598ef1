"""Atomic, private writes and schema-checked reads."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from vibey_gh.errors import BadInput, EvidenceError
from vibey_gh.files import (
    append_line_durably,
    atomic_write_json,
    atomic_write_shared_text,
    atomic_write_text,
    leftover_temp_files,
    read_json,
    utf8,
)
from vibey_gh.platforms.storage.system_paths import check_output_file, check_output_folder


def test_atomic_write_is_private_and_replaces_whole(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "state.json"
    atomic_write_json(target, {"schema_version": 1, "a": 1})
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    atomic_write_json(target, {"schema_version": 1, "a": 2})
    assert read_json(target, kind="test", schema_version=1)["a"] == 2
    assert list(leftover_temp_files(target.parent)) == []


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "evidence.json"
    atomic_write_text(target, "old")

    with pytest.raises(TypeError):
        atomic_write_json(target, {"x": object()})
    assert target.read_text() == "old"
    assert list(leftover_temp_files(tmp_path)) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "is not valid JSON"),
        ("[1]", "does not hold a JSON object"),
        ('{"schema_version": 9}', "has schema_version 9; this tool reads 1"),
    ],
)
def test_read_json_says_what_is_wrong(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(content)
    with pytest.raises(EvidenceError, match=message):
        read_json(path, kind="evidence", schema_version=1)
    with pytest.raises(EvidenceError, match="not found"):
        read_json(tmp_path / "none.json", kind="evidence")


def test_append_line_durably_adds_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    append_line_durably(path, '{"a": 1}')
    append_line_durably(path, '{"b": 2}\n')
    assert path.read_text() == '{"a": 1}\n{"b": 2}\n'
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_an_atomic_write_never_renames_over_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(BadInput, match="is a FIFO, not a regular file; not replaced"):
        atomic_write_shared_text(fifo, "x", 0o644)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temporary file left


def test_an_atomic_write_replaces_a_link_not_what_it_points_to(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(fifo)
    atomic_write_text(tmp_path / "link", "x")
    assert (tmp_path / "link").read_text() == "x" and not (tmp_path / "link").is_symlink()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("path", ["/proc/x", "/sys/kernel/x", "/dev/full", "/dev"])
def test_output_checks_refuse_kernel_file_systems(path: str) -> None:
    with pytest.raises(BadInput, match=r"is in /(proc|sys|dev), the kernel's"):
        check_output_file(Path(path), "--out")
    with pytest.raises(BadInput, match=r"is in /(proc|sys|dev), the kernel's"):
        check_output_folder(Path(path), "--out")


def test_output_checks_pass_what_is_missing_or_of_the_right_kind(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    check_output_file(tmp_path / "file", "--out")
    check_output_file(tmp_path / "missing", "--out")
    check_output_folder(tmp_path, "--out")
    check_output_folder(tmp_path / "missing" / "below", "--out")
    with pytest.raises(BadInput, match="is a folder, not a regular file"):
        check_output_file(tmp_path, "--out")


def test_a_lone_surrogate_is_written_as_its_json_escape_and_reads_back(tmp_path: Path) -> None:
    value = {"path": "pkg/\ud800.py"}  # what json.loads gives for a runner's "\ud800"
    append_line_durably(tmp_path / "events.jsonl", json.dumps(value, ensure_ascii=False))
    atomic_write_text(tmp_path / "one.json", json.dumps(value, ensure_ascii=False))
    for name in ("events.jsonl", "one.json"):
        raw = (tmp_path / name).read_bytes()
        assert b"\\ud800" in raw
        assert json.loads(raw.decode("utf-8")) == value
    assert utf8("plain é") == "plain é".encode()
