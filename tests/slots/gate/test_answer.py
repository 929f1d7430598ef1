"""`slots allowed --json` is a fixed form scripts read: its keys and their types stay put."""

from __future__ import annotations

import json
from pathlib import Path

from vibey_gh.slots.gate.answer import ALLOWED_SCHEMA, REASON_CODES, AllowedAnswer

FORM = {
    "schema_version": int,
    "allowed": int,
    "reason": str,
    "reason_code": str,
    "fingerprint": str,
    "evidence": str,
    "requested": bool,
    "request": str,
    "declaration": str,
    "ideal": int,
    "evidence_age_seconds": float,
    "production_slots": int,
}


def test_the_json_form_keeps_its_keys_and_types() -> None:
    answer = AllowedAnswer(
        allowed=2,
        reason="measured: two",
        fingerprint="abc123",
        evidence=Path("/state/evidence/abc123.json"),
        requested=True,
        declaration="measured",
        ideal=3,
        request=Path("/state/requests/abc123.json"),
        reason_code="measured",
        evidence_age_s=12.5,
        production_slots=4,
    )
    printed = json.loads(json.dumps(answer.to_json()))  # trusted-json: written just above

    assert ALLOWED_SCHEMA == 1 and printed["schema_version"] == 1
    assert {key: type(value) for key, value in printed.items()} == FORM
    assert printed["evidence"] == "/state/evidence/abc123.json"
    assert printed["reason_code"] in REASON_CODES


def test_what_was_not_known_is_null_not_left_out() -> None:
    answer = AllowedAnswer(
        allowed=1, reason="declared 1", fingerprint=None, evidence=None, requested=False,
        declaration=None,
    )  # fmt: skip
    printed = answer.to_json()

    assert set(printed) == set(FORM)
    assert [key for key, value in printed.items() if value is None] == [
        "fingerprint", "evidence", "request", "declaration", "ideal", "evidence_age_seconds",
        "production_slots",
    ]  # fmt: skip
    assert printed["reason_code"] == "declared"
