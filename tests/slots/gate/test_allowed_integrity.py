"""`slots allowed` never answers from evidence that is not what was recorded, under its own
name, and answers in every state of the state folder."""

from __future__ import annotations

import errno
import json
import os
import threading
from pathlib import Path

import pytest
from test_allowed import (
    DAY,
    DEVICE,
    NOW,
    RUNNER,
    WINDOW,
    config,
    deps_for,
    good_sweep,
    record,
)

from tests.support.evidence import write_evidence_file
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint, fingerprint_id
from vibey_gh.slots.evidence.store import (
    evidence_path,
    integrity_digest,
    seal_evidence,
)
from vibey_gh.slots.gate.allowed import AllowedAnswer, decide_allowed
from vibey_gh.slots.gate.answer import state_problem
from vibey_gh.state import StateLayout

TODAY = compute_fingerprint(DEVICE, RUNNER, WINDOW)


def ask(root: Path) -> AllowedAnswer:
    return decide_allowed(config("measured"), deps=deps_for(root))


def assert_refused(answer: AllowedAnswer, fragment: str) -> None:
    assert answer.allowed == 1, answer.reason
    assert fragment in answer.reason, answer.reason


def rewrite(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


# --- evidence integrity ---------------------------------------------------------------------


def test_sealed_evidence_is_used(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    assert ask(tmp_path).allowed == 2


def test_evidence_copied_to_another_fingerprints_name_is_unusable(tmp_path: Path) -> None:
    # measured at another window, copied to the name of today's fingerprint
    other = compute_fingerprint(DEVICE, RUNNER, 1024)
    source = evidence_path(StateLayout(tmp_path), other.id)
    write_evidence_file(source, other, good_sweep(), NOW - DAY)
    target = evidence_path(StateLayout(tmp_path), TODAY.id)
    target.write_bytes(source.read_bytes())
    answer = ask(tmp_path)
    assert_refused(answer, "copied from another fingerprint")
    assert answer.requested


def test_a_recorded_id_edited_to_todays_is_unusable(tmp_path: Path) -> None:
    other = compute_fingerprint(DEVICE, RUNNER, 1024)
    target = evidence_path(StateLayout(tmp_path), TODAY.id)
    write_evidence_file(target, other, good_sweep(), NOW - DAY)
    rewrite(target, lambda d: d["fingerprint"].update(id=TODAY.id))
    assert_refused(ask(tmp_path), f"fingerprint fields give {other.id}, not the recorded")


def test_a_field_edited_to_todays_is_unusable(tmp_path: Path) -> None:
    other = compute_fingerprint(DEVICE, RUNNER, 1024)
    target = evidence_path(StateLayout(tmp_path), TODAY.id)
    write_evidence_file(target, other, good_sweep(), NOW - DAY)

    def to_today(data: dict) -> None:
        data["fingerprint"] = {"id": TODAY.id, "fields": dict(TODAY.fields)}

    rewrite(target, to_today)  # id, fields and name now agree; only the digest knows
    assert_refused(ask(tmp_path), "evidence edited after it was recorded")


def test_a_figure_edited_by_hand_is_detected(tmp_path: Path) -> None:
    path = record(tmp_path, good_sweep())
    assert ask(tmp_path).allowed == 2  # the figures are now kept in the cache

    def faster(data: dict) -> None:
        data["steps"][3]["duration_s"] = 1.0

    rewrite(path, faster)
    assert_refused(ask(tmp_path), "evidence edited after it was recorded")


def test_evidence_without_a_digest_is_unusable(tmp_path: Path) -> None:
    path = record(tmp_path, good_sweep())
    rewrite(path, lambda d: d.pop("integrity"))
    assert_refused(ask(tmp_path), "no integrity digest (recorded by an older version)")


def test_the_digest_covers_everything_but_itself() -> None:
    data = {"kind": "vibey-gh-evidence", "steps": [1, 2], "bounds": {"min_gain": 0.1}}
    sealed = seal_evidence(data)
    assert sealed["integrity"]["digest"] == integrity_digest(sealed)
    assert integrity_digest({**data, "bounds": {"min_gain": 0.0}}) != integrity_digest(data)
    assert fingerprint_id(TODAY.fields) == TODAY.id


# --- time -----------------------------------------------------------------------------------


def test_evidence_dated_a_year_ahead_is_unusable(tmp_path: Path) -> None:
    record(tmp_path, good_sweep(), age_days=-365)
    assert_refused(ask(tmp_path), "unusable evidence dated 365 days in the future")


def test_evidence_a_minute_ahead_is_within_the_skew_tolerance(tmp_path: Path) -> None:
    record(tmp_path, good_sweep(), age_days=-60 / DAY)
    assert ask(tmp_path).allowed == 2


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_non_finite_date_is_unusable(tmp_path: Path, value: str) -> None:
    path = record(tmp_path, good_sweep())
    text = path.read_text()
    created = json.loads(text)["created_at"]
    path.write_text(text.replace(f'"created_at": {created!r}', f'"created_at": {value}'))
    answer = ask(tmp_path)
    assert_refused(answer, "unusable evidence")
    assert "number" in answer.reason


# --- special files --------------------------------------------------------------------------


def test_a_fifo_as_evidence_is_refused_without_blocking(tmp_path: Path) -> None:
    path = evidence_path(StateLayout(tmp_path), TODAY.id)
    os.mkfifo(path)
    answers: list[AllowedAnswer] = []
    asker = threading.Thread(target=lambda: answers.append(ask(tmp_path)), daemon=True)
    asker.start()
    asker.join(30)
    assert answers, "slots allowed blocked on a FIFO"
    assert_refused(answers[0], "is a FIFO, not a regular file")


def test_dev_zero_as_evidence_is_refused(tmp_path: Path) -> None:
    evidence_path(StateLayout(tmp_path), TODAY.id).symlink_to("/dev/zero")
    assert_refused(ask(tmp_path), "is a character device, not a regular file")


def test_a_folder_as_evidence_is_refused(tmp_path: Path) -> None:
    evidence_path(StateLayout(tmp_path), TODAY.id).mkdir()
    assert_refused(ask(tmp_path), "is a folder, not a regular file")


# --- an answer in every state ---------------------------------------------------------------


def test_a_state_path_that_is_a_file_still_answers(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.write_text("not a folder")
    answer = ask(state)
    assert_refused(answer, "(calibration request not written: the state path is not a folder)")
    assert not answer.requested
    assert state.read_text() == "not a folder"


def test_a_state_path_over_path_max_still_answers(tmp_path: Path) -> None:
    state = tmp_path / ("x" * 255) / ("y" * 255) / ("z" * 255)
    for _ in range(16):
        state = state / ("d" * 255)
    answer = ask(state)
    assert_refused(answer, "state path too long")


def test_an_unwritable_requests_folder_still_answers_with_the_reason(tmp_path: Path) -> None:
    record(tmp_path, good_sweep(), age_days=41)
    (tmp_path / "requests").write_text("in the way")
    answer = ask(tmp_path)
    assert_refused(answer, "stale: evidence is 41 days old")
    assert "(calibration request not written:" in answer.reason
    assert (tmp_path / "requests").read_text() == "in the way"


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.EROFS, "read-only state"),
        (errno.ENOSPC, "disk full"),
        (errno.ENAMETOOLONG, "state path too long"),
        (errno.ENOTDIR, "the state path is not a folder"),
    ],
)
def test_state_problems_are_named(code: int, words: str) -> None:
    assert state_problem(OSError(code, os.strerror(code))) == words


# --- slots show refuses the same evidence ---------------------------------------------------


def show(root: Path):  # type: ignore[no-untyped-def]
    from vibey_gh.slots.report.show import gather_show

    return gather_show(config=config("measured"), deps=deps_for(root))


def test_show_refuses_copied_evidence_instead_of_calling_it_todays(tmp_path: Path) -> None:
    from vibey_gh.errors import EvidenceError

    other = compute_fingerprint(DEVICE, RUNNER, 1024)
    write_evidence_file(
        evidence_path(StateLayout(tmp_path), TODAY.id), other, good_sweep(), NOW - DAY
    )
    with pytest.raises(EvidenceError, match="unusable evidence: .*copied from another"):
        show(tmp_path)


def test_show_refuses_dev_zero_at_once(tmp_path: Path) -> None:
    from vibey_gh.errors import EvidenceError

    evidence_path(StateLayout(tmp_path), TODAY.id).symlink_to("/dev/zero")
    with pytest.raises(EvidenceError, match="is a character device, not a regular file"):
        show(tmp_path)


def test_show_refuses_evidence_from_the_future(tmp_path: Path) -> None:
    from vibey_gh.errors import EvidenceError

    record(tmp_path, good_sweep(), age_days=-365)
    with pytest.raises(EvidenceError, match="unusable evidence dated 365 days in the future"):
        show(tmp_path)
