"""The soak file: sealed like evidence, refused when edited, copied or not a soak."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.slots.gate.test_allowed import DEVICE, RUNNER, WINDOW
from vibey_gh.errors import EvidenceError
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.soak_file import load_soak, soak_path, soaks_for, write_soak
from vibey_gh.state import StateLayout

FINGERPRINT = compute_fingerprint(DEVICE, RUNNER, WINDOW)


def _data(slots: int = 2) -> dict[str, Any]:
    return {
        "fingerprint": {"id": FINGERPRINT.id, "fields": dict(FINGERPRINT.fields)},
        "created_at": 1.0e9, "slots": slots, "measured_s": 600.0, "complete": True,
        "judgement": {"verdict": "holds", "holds": True}, "series": [],
    }  # fmt: skip


def test_a_soak_reads_back_as_written(layout: StateLayout) -> None:
    path = soak_path(layout, FINGERPRINT.id, 2)
    write_soak(path, _data())
    record = load_soak(path)
    assert (record.slots, record.recorded_verdict) == (2, "holds")
    # read back, it is judged again from its windows: this one has none to hold on
    assert not record.holds
    assert record.judged().rejudged == "its windows cannot be read: no window length"
    assert json.loads(path.read_text())["integrity"]["algorithm"] == "sha256"
    assert [p for p, _ in soaks_for(layout, FINGERPRINT.id)] == [path]


def test_an_edited_soak_is_refused(layout: StateLayout) -> None:
    path = soak_path(layout, FINGERPRINT.id, 2)
    write_soak(path, _data())
    data = json.loads(path.read_text())
    data["judgement"]["holds"] = False
    path.write_text(json.dumps(data))
    with pytest.raises(EvidenceError, match="edited"):
        load_soak(path)
    ((_, problem),) = soaks_for(layout, FINGERPRINT.id)
    assert isinstance(problem, str) and "edited" in problem


def test_a_soak_copied_to_another_n_is_refused(layout: StateLayout, tmp_path: Path) -> None:
    path = soak_path(layout, FINGERPRINT.id, 2)
    write_soak(path, _data())
    copied = soak_path(layout, FINGERPRINT.id, 4)
    copied.write_bytes(path.read_bytes())
    with pytest.raises(EvidenceError, match="another fingerprint's or N's soak"):
        load_soak(copied)


def test_a_file_that_is_not_a_soak_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"schema_version": 1, "kind": "vibey-gh-evidence"}))
    with pytest.raises(EvidenceError, match="not a soak"):
        load_soak(path)
