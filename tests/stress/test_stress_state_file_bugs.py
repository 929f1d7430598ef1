"""Damaged evidence and checkpoint files the fuzz tests beside this file once tripped over, one
case each: every reader now turns them into one clear line (or, for the `allowed` gate, an
answer of one with the reason)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import assert_clean_outcome
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

pytestmark = pytest.mark.integration

NOT_UTF8 = b'{"schema_version": 1, "kind": "\x80"}'
# (what is wrong, where in the first step, the value put there)
BAD_STEP_VALUES: list[tuple[str, list[Any], Any]] = [
    ("timeline point is text", ["timeline", 0, 0], ":"),
    ("swap counter is a list", ["timeline", 1, 5], []),
    ("finish reason is a list", ["turns", 0, "result", "finish_reason"], []),
    ("output tokens is an object", ["turns", 0, "result", "output_tokens"], {}),
    ("turn result is null", ["turns", 0, "result"], None),
    ("production is a list", ["production"], [1]),
    ("memory budget is an object", ["memory_budget_bytes"], {}),
]
bad_step_values = pytest.mark.parametrize(
    ("where", "value"),
    [pytest.param(where, value, id=name) for name, where, value in BAD_STEP_VALUES],
)


def _with_bad_first_step(document: dict[str, Any], where: list[Any], value: Any) -> bytes:
    node = document["steps"][0]
    for part in where[:-1]:
        node = node[part]
    node[where[-1]] = value
    return json.dumps(document).encode()


@bad_step_values
def test_allowed_answers_one_for_evidence_with_a_bad_step_value(
    where: list[Any], value: Any, one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    write_measured_config()
    path = todays_evidence(isolated_state, one_slot_baseline)
    path.write_bytes(_with_bad_first_step(two_step_evidence(one_slot_baseline), where, value))
    assert allowed_answer()["allowed"] == 1


@bad_step_values
def test_show_fails_in_one_line_for_evidence_with_a_bad_step_value(
    where: list[Any], value: Any, one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    write_measured_config()
    path = todays_evidence(isolated_state, one_slot_baseline)
    path.write_bytes(_with_bad_first_step(two_step_evidence(one_slot_baseline), where, value))
    show("--json")


@bad_step_values
def test_calibrate_stops_in_one_line_on_a_checkpoint_with_a_bad_step_value(
    where: list[Any], value: Any, one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    checkpoint = json.loads(one_slot_baseline.checkpoint)
    path = checkpoint_path(isolated_state, one_slot_baseline)
    path.write_bytes(_with_bad_first_step(checkpoint, where, value))
    result = calibrate_resuming(one_slot_baseline)
    assert_clean_outcome(result, ok_codes=(), error_codes=(1, 2), alone=False)


@pytest.mark.parametrize("fields", [["abcd"], {"accelerators": 5}], ids=["list", "number"])
def test_allowed_names_what_differs_from_evidence_with_odd_fingerprint_fields(
    fields: Any, one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    write_measured_config()
    document = json.loads(one_slot_baseline.evidence)
    document["fingerprint"]["fields"] = fields
    (StateLayout(isolated_state).evidence / EVIDENCE_NAME_ELSEWHERE).write_text(
        json.dumps(document)
    )
    assert allowed_answer()["reason"].startswith("unmeasured")


def test_allowed_answers_one_for_evidence_that_is_not_utf8(
    one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    write_measured_config()
    todays_evidence(isolated_state, one_slot_baseline).write_bytes(NOT_UTF8)
    assert allowed_answer()["allowed"] == 1


def test_show_fails_in_one_line_for_evidence_that_is_not_utf8(
    one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    write_measured_config()
    todays_evidence(isolated_state, one_slot_baseline).write_bytes(NOT_UTF8)
    show("--json")


def test_calibrate_stops_in_one_line_on_a_checkpoint_that_is_not_utf8(
    one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    checkpoint_path(isolated_state, one_slot_baseline).write_bytes(NOT_UTF8)
    result = calibrate_resuming(one_slot_baseline)
    assert_clean_outcome(result, ok_codes=(), error_codes=(1, 2), alone=False)


def test_a_checkpoint_that_is_not_json_is_bad_input(
    one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    checkpoint_path(isolated_state, one_slot_baseline).write_text('{"schema_version": 1, "ste')
    result = calibrate_resuming(one_slot_baseline)
    assert result.exit_code == 2, result.stderr
