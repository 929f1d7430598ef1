"""Fuzzing the files the tool writes for itself and reads back: evidence (read by `allowed`, a
gate that must answer 1 with a reason and never crash, and by `show`) and checkpoints (read by
`calibrate`, which must stop with one line). The file read is never changed.

Edits go two levels deep (a top-level value, or one step or field replaced or dropped); what
lies deeper, inside a step, is not type-checked by the readers yet: the known failures are
in test_stress_state_file_bugs.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzz_support import FUZZ, assert_clean_outcome, json_values, mutations_of
from hypothesis import given
from hypothesis import strategies as st
from state_file_support import (
    EVIDENCE_NAME_ELSEWHERE,
    allowed_answer,
    calibrate_resuming,
    checkpoint_path,
    show,
    todays_evidence,
    two_step_evidence,
    write_measured_config,
)
from stress_support import OneSlotBaseline

from vibey_gh.state import StateLayout

pytestmark = pytest.mark.integration  # the valid documents come from a real one-slot step

DEPTH = 2
# UTF-8 only: bytes that are not UTF-8 are a known, separate failure
raw_documents = st.text(max_size=200).map(str.encode) | json_values.map(
    lambda v: json.dumps(v).encode()
)


def _evidence_cases(
    baseline: OneSlotBaseline, skip: tuple[str, ...] = ()
) -> st.SearchStrategy[bytes]:
    edits = mutations_of(two_step_evidence(baseline), DEPTH, skip)
    return raw_documents | edits.map(lambda doc: json.dumps(doc).encode())


@FUZZ
@given(data=st.data())
def test_allowed_answers_for_any_evidence_file_and_leaves_it_alone(
    data: st.DataObject, one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    content = data.draw(_evidence_cases(one_slot_baseline))
    write_measured_config()
    path = todays_evidence(isolated_state, one_slot_baseline)
    path.write_bytes(content)
    answer = allowed_answer()
    assert path.read_bytes() == content
    try:
        document = json.loads(content)
    except ValueError:
        document = None
    if not isinstance(document, dict) or document.get("kind") != "vibey-gh-evidence":
        assert answer["allowed"] == 1 and "unusable evidence" in answer["reason"]


@FUZZ
@given(data=st.data())
def test_allowed_names_what_differs_from_any_other_evidence_file(
    data: st.DataObject, one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    """Evidence of another fingerprint is read to say what changed since; it may hold
    anything but odd fingerprint fields (a known failure)."""
    content = data.draw(_evidence_cases(one_slot_baseline, skip=("fingerprint",)))
    write_measured_config()
    todays_evidence(isolated_state, one_slot_baseline).unlink(missing_ok=True)
    path = StateLayout(isolated_state).evidence / EVIDENCE_NAME_ELSEWHERE
    path.write_bytes(content)
    answer = allowed_answer()
    assert answer["allowed"] == 1 and answer["reason"].startswith("unmeasured")
    assert path.read_bytes() == content


@pytest.mark.parametrize("flags", [("--json",), ()], ids=["json", "table"])
@FUZZ
@given(data=st.data())
def test_show_shows_or_fails_in_one_line_for_any_evidence_file(
    data: st.DataObject,
    flags: tuple[str, ...],
    one_slot_baseline: OneSlotBaseline,
    isolated_state: Path,
) -> None:
    content = data.draw(_evidence_cases(one_slot_baseline))
    write_measured_config()
    path = todays_evidence(isolated_state, one_slot_baseline)
    path.write_bytes(content)
    show(*flags)
    assert path.read_bytes() == content


@FUZZ
@given(data=st.data())
def test_calibrate_stops_in_one_line_on_any_checkpoint_and_leaves_it_alone(
    data: st.DataObject, one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    """Exit 1 or 2: which one a broken checkpoint deserves is a known question."""
    edits = mutations_of(json.loads(one_slot_baseline.checkpoint), DEPTH)
    content = data.draw(raw_documents | edits.map(lambda doc: json.dumps(doc).encode()))
    path = checkpoint_path(isolated_state, one_slot_baseline)
    path.write_bytes(content)
    result = calibrate_resuming(one_slot_baseline)
    assert_clean_outcome(result, ok_codes=(), error_codes=(1, 2), alone=False)
    assert path.read_bytes() == content
    assert not list(StateLayout(isolated_state).evidence.glob("*.json")), "no evidence written"
