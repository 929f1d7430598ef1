"""Evidence the tests write by hand, sealed as a calibration seals it, and the recorded sweep
they start from (a real 1-1-2 sweep of the embedded runner, tests/fixtures/evidence)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vibey_gh.files import atomic_write_json
from vibey_gh.interfaces.schema import as_json
from vibey_gh.slots.evidence.fingerprint import Fingerprint, fingerprint_id
from vibey_gh.slots.evidence.store import (
    EVIDENCE_SCHEMA,
    Evidence,
    evidence_from_json,
    seal_evidence,
)
from vibey_gh.slots.judging.records import StepRecord

EVIDENCE_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "evidence"
RECORDED_FINGERPRINT = "a6e718b9b4a7bd46"
RECORDED = EVIDENCE_FIXTURES / f"slots-{RECORDED_FINGERPRINT}.json"


def recorded_evidence(change: Callable[[dict[str, Any]], Any] | None = None) -> dict[str, Any]:
    """The recorded sweep changed by `change`, keyed to its (changed) fingerprint fields and
    sealed, as a calibration would have written it."""
    data: dict[str, Any] = json.loads(RECORDED.read_text(encoding="utf-8"))
    if change is not None:
        change(data)
    data["fingerprint"]["id"] = fingerprint_id(data["fingerprint"]["fields"])
    return seal_evidence(data)


def write_sealed(path: Path, data: dict[str, Any]) -> Path:
    """`data` sealed and written to `path` as the evidence writer writes it."""
    atomic_write_json(path, seal_evidence(data))
    return path


def write_evidence_file(
    path: Path, fingerprint: Fingerprint, steps: Sequence[StepRecord], created_at: float
) -> None:
    """An evidence file as calibrate writes it, minimal: what allowed and show read."""
    write_sealed(
        path,
        {
            "schema_version": EVIDENCE_SCHEMA,
            "kind": "vibey-gh-evidence",
            "fingerprint": as_json(fingerprint),
            "created_at": created_at,
            "steps": [as_json(s) for s in steps],
            "recorded": True,
        },
    )


def synthetic_evidence(steps: list[StepRecord], **extra: object) -> Evidence:
    """Evidence over `steps` read back as the store reads it (unsealed: for renderers)."""
    data = {
        "schema_version": 1,
        "kind": "vibey-gh-evidence",
        "fingerprint": {"id": "0123456789abcdef", "fields": {"window": 4096}},
        "created_at": 1_800_000_000.0,
        "corpus": {"sha256": "c" * 64, "pool_sha256": "p" * 64, "turns": 10, "segments": 4},
        "steps": [as_json(s) for s in steps],
        **extra,
    }
    return evidence_from_json(data, None)
