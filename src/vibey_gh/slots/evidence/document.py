"""The evidence file as a typed document: what `slots calibrate` writes and every reader reads.

`EvidenceDocument.to_json` is the one writer of the file's content (the store seals and writes
it) and `EvidenceDocument.from_json` the one reader: every field is read through
`interfaces.json_fields`, so a damaged file fails as one `MalformedJson` that names the field's
JSON path (`evidence.steps[3].turns[12].result.finish_reason: expected a string, got 3`).

The sections that describe rather than decide (device, corpus, method, bounds as recorded,
runner, the seal, the verdicts as then judged) are typed in `sections`: JSON objects whose
every key is optional, since an older file may hold less. Top-level keys this version does not
name are kept in `extra`, and a section's unnamed keys stay in it, so nothing a newer or older
writer put in the file is lost on the way through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec
from msgspec import field

from ...errors import MalformedJson
from ...interfaces import json_fields
from ...interfaces.bounds import BoundsJson
from ...interfaces.schema import as_json, checked_at
from ..judging.judge import VerdictJson
from ..judging.records import StepRecord
from .schema import EVIDENCE_KIND, EVIDENCE_SCHEMA, INTEGRITY_KEY
from .sections import (
    CorpusSection,
    DeviceSection,
    IntegritySeal,
    MethodSection,
    RunnerSection,
    read_bounds,
    read_corpus,
    read_device,
    read_integrity,
    read_method,
    read_runner,
    read_verdict,
)

if TYPE_CHECKING:
    from ..judging.records import StepRecord

# The order the fields are written in (the digest sorts keys; people reading the file do not).
_NAMED = (
    "schema_version",
    "kind",
    "fingerprint",
    "created_at",
    "device",
    "corpus",
    "method",
    "bounds",
    "confidence",
    "steps",
    "verdicts",
    "decision",
    "complete",
    "production_version",
    "production_absent",
    "runner",
    "runs_dir",
    "notes",
    "recorded",
    INTEGRITY_KEY,
)


class Decision(msgspec.Struct, frozen=True):
    """The decision as judged when the evidence was recorded, and why the sweep ended."""

    ideal: int | None = None
    reason: str = ""
    stop_reason: str | None = None


class EvidenceDocument(msgspec.Struct, frozen=True):
    """One evidence file (see docs/reference/evidence.md for what each field means).

    fingerprint / fingerprint_fields: the fingerprint's id and the fields it hashes.
    confidence: how sure the intervals are (None in files older than the field).
    verdicts: each step's verdict as judged when recorded (kept for readers of the file; the
      tool re-judges the steps). decision: the ideal and the stop reason as then judged (None
      in a file that records none).
    complete: False for a paused or stopped sweep. recorded: kept as the device's evidence.
    integrity: the digest `store.seal_evidence` adds; None before sealing.
    """

    fingerprint: str
    fingerprint_fields: Mapping[str, object]
    created_at: float
    steps: tuple[StepRecord, ...]
    schema_version: int = EVIDENCE_SCHEMA
    device: DeviceSection = field(default_factory=lambda: DeviceSection())
    corpus: CorpusSection = field(default_factory=lambda: CorpusSection())
    method: MethodSection = field(default_factory=lambda: MethodSection())
    bounds: BoundsJson = field(default_factory=lambda: BoundsJson())
    confidence: float | None = None
    verdicts: tuple[VerdictJson, ...] = ()
    decision: Decision | None = None
    complete: bool = True
    production_version: str | None = None
    production_absent: str | None = None
    runner: RunnerSection = field(default_factory=lambda: RunnerSection())
    runs_dir: str | None = None
    notes: tuple[str, ...] = ()
    recorded: bool = False
    integrity: IntegritySeal | None = None
    extra: Mapping[str, object] = field(default_factory=dict)

    # Written and read by hand rather than from the declaration alone: the file keeps the
    # top-level keys this version does not name (`extra`, which a declared record would drop)
    # and nests the fingerprint's id and fields under one key. Every part is declared and
    # read with `checked`: the steps, the decision and each section.
    def to_json(self) -> dict[str, object]:
        """The file's content, in the order it has always been written."""
        data: dict[str, object] = {
            "schema_version": self.schema_version,
            "kind": EVIDENCE_KIND,
            "fingerprint": {"id": self.fingerprint, "fields": dict(self.fingerprint_fields)},
            "created_at": self.created_at,
            "device": dict(self.device),
            "corpus": dict(self.corpus),
            "method": dict(self.method),
            "bounds": dict(self.bounds),
            "confidence": self.confidence,
            "steps": [as_json(step) for step in self.steps],
            "verdicts": [dict(verdict) for verdict in self.verdicts],
            "decision": None if self.decision is None else as_json(self.decision),
            "complete": self.complete,
            "production_version": self.production_version,
            "production_absent": self.production_absent,
            "runner": dict(self.runner),
            "runs_dir": self.runs_dir,
            "notes": list(self.notes),
            "recorded": self.recorded,
            **self.extra,
        }
        if self.integrity is not None:
            data[INTEGRITY_KEY] = dict(self.integrity)
        return data

    @classmethod
    def from_json(cls, data: object) -> EvidenceDocument:
        """Raises MalformedJson naming the bad field's path, from `evidence`."""
        with json_fields.within("evidence"):
            return cls._read(data)

    @classmethod
    def _read(cls, raw: object) -> EvidenceDocument:
        data = json_fields.an_object(raw, "kind")
        if json_fields.text(data, "kind") != EVIDENCE_KIND:
            raise MalformedJson(f"expected {EVIDENCE_KIND!r}, got {data['kind']!r:.40}", ("kind",))
        fingerprint = json_fields.mapping(data, "fingerprint", json_fields.REQUIRED)
        with json_fields.within("fingerprint"):
            fingerprint_id = json_fields.text(fingerprint, "id")
            fingerprint_fields = json_fields.mapping(fingerprint, "fields")
        created_at = json_fields.number(data, "created_at")
        if created_at != created_at or created_at in (float("inf"), float("-inf")):
            raise MalformedJson(f"expected a finite number, got {created_at}", ("created_at",))
        return cls(
            schema_version=json_fields.integer(data, "schema_version", EVIDENCE_SCHEMA),
            fingerprint=fingerprint_id,
            fingerprint_fields=fingerprint_fields,
            created_at=created_at,
            device=read_device(data),
            corpus=read_corpus(data),
            method=read_method(data),
            bounds=read_bounds(data),
            confidence=json_fields.number(data, "confidence", None),
            steps=checked_at(data, "steps", tuple[StepRecord, ...], json_fields.REQUIRED),
            verdicts=tuple(json_fields.each(data, "verdicts", read_verdict)),
            decision=checked_at(data, "decision", Decision) if data.get("decision") else None,
            complete=json_fields.boolean(data, "complete", True),
            production_version=json_fields.text(data, "production_version", None),
            production_absent=json_fields.text(data, "production_absent", None),
            runner=read_runner(data),
            runs_dir=json_fields.text(data, "runs_dir", None),
            notes=checked_at(data, "notes", tuple[str, ...], ()),
            recorded=json_fields.boolean(data, "recorded", False),
            integrity=read_integrity(data, INTEGRITY_KEY) if INTEGRITY_KEY in data else None,
            extra={key: value for key, value in data.items() if key not in _NAMED},
        )


__all__ = ["EVIDENCE_KIND", "EVIDENCE_SCHEMA", "Decision", "EvidenceDocument"]
