"""Which recorded files a list of paths names: a file as given, a folder's files of one suffix."""

from __future__ import annotations

from pathlib import Path

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.slots.corpus.sources.sessions import session_files
from vibey_gh.slots.corpus.sources.traces import trace_files


def test_sessions_are_found_at_every_level_traces_only_in_the_folder(tmp_path: Path) -> None:
    (tmp_path / "deep").mkdir()
    for name in ("b.jsonl", "a.json", "deep/c.jsonl", "deep/d.json", "notes.txt"):
        (tmp_path / name).write_text("{}\n")
    given = tmp_path / "notes.txt"
    assert session_files([tmp_path, given]) == [
        tmp_path / "b.jsonl",
        tmp_path / "deep" / "c.jsonl",
        given,
    ]
    assert trace_files([tmp_path]) == [tmp_path / "a.json"]


def test_a_folder_without_inputs_and_a_missing_path_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"no \*\.jsonl session file under"):
        session_files([tmp_path])
    with pytest.raises(BadInput, match=r"no \*\.json trace file in"):
        trace_files([tmp_path])
    with pytest.raises(BadInput, match="no such trace file or folder"):
        trace_files([tmp_path / "gone"])
