"""A soak's measured result is never overwritten without being kept: the soak it replaces
goes to the history first, and a stopped soak does not take a complete one's place."""

from __future__ import annotations

import stat

from tests.slots.evidence.test_soak_file import FINGERPRINT, _data
from vibey_gh.slots.evidence.history import HISTORY_KEPT, list_history
from vibey_gh.slots.evidence.soak_file import load_soak, soak_path
from vibey_gh.slots.evidence.soak_history import kept_soaks, record_soak_file
from vibey_gh.state import StateLayout


def _record(layout: StateLayout, **changes: object):  # type: ignore[no-untyped-def]
    path = soak_path(layout, FINGERPRINT.id, 2)
    return record_soak_file(layout, path, FINGERPRINT.id, 2, {**_data(), **changes})


def test_a_new_soak_replaces_the_old_after_keeping_it_byte_for_byte(layout: StateLayout) -> None:
    first = _record(layout, created_at=1.0e9)
    assert first.kept is None and first.sentence() is None
    before = soak_path(layout, FINGERPRINT.id, 2).read_bytes()
    second = _record(layout, created_at=1.0e9 + 86400, measured_s=7200.0)
    assert second.replaced and second.kept is not None
    assert second.kept.read_bytes() == before
    assert stat.S_IMODE(second.kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(second.kept.parent.stat().st_mode) == 0o700
    assert load_soak(second.path).measured_s == 7200.0
    sentence = second.sentence() or ""
    assert sentence.startswith("replaced the soak of 2001-09-09") and "N=2" in sentence
    # the history lists it as a soak, apart from replaced sweeps
    ((path, record),) = kept_soaks(layout, FINGERPRINT.id)
    assert path == second.kept and not isinstance(record, str) and record.measured_s == 600.0
    assert list_history(layout, FINGERPRINT.id) == []


def test_a_stopped_soak_leaves_the_complete_one_answering_and_is_kept(layout: StateLayout) -> None:
    _record(layout)
    complete = soak_path(layout, FINGERPRINT.id, 2).read_bytes()
    stopped = _record(layout, created_at=2.0e9, complete=False, measured_s=60.0)
    assert not stopped.replaced and stopped.kept is not None
    assert soak_path(layout, FINGERPRINT.id, 2).read_bytes() == complete
    assert load_soak(stopped.kept).measured_s == 60.0  # sealed: reads as a soak
    assert "still answers" in (stopped.sentence() or "")


def test_the_kept_soaks_are_bounded_as_replaced_sweeps_are(layout: StateLayout) -> None:
    for day in range(HISTORY_KEPT + 3):
        _record(layout, created_at=1.0e9 + day * 86400)
    kept = kept_soaks(layout, FINGERPRINT.id)
    assert len(kept) == HISTORY_KEPT
    newest = kept[0][1]
    assert not isinstance(newest, str) and newest.created_at == 1.0e9 + (HISTORY_KEPT + 1) * 86400
