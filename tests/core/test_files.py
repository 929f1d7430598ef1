"""Atomic, private writes and schema-checked reads."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from vibey_gh.errors import EvidenceError
from vibey_gh.files import (
    append_line_durably,
    atomic_write_json,
    atomic_write_text,
    leftover_temp_files,
    read_json,
)


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
