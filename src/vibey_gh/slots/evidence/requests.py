"""Calibration requests: written by `slots allowed` when evidence is missing, stale or
unusable, read by the storm (which calibrates between storms) and cleared by a calibration.

requests/<fp>.json holds {schema_version, kind, fingerprint {id, fields}, reason,
requested_at, settings}.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from ...errors import EvidenceError
from ...files import atomic_write_json, read_json
from ...interfaces import json_fields
from ...interfaces.schema import as_json, checked
from ...state import StateLayout

REQUEST_SCHEMA = 1
REQUEST_KIND = "vibey-gh-calibration-request"


class FingerprintRef(msgspec.Struct, frozen=True):
    """A fingerprint as a request names it: its id and the fields it hashes."""

    id: str
    fields: dict[str, object] = msgspec.field(default_factory=dict)


class RequestDocument(msgspec.Struct, frozen=True, kw_only=True):
    """One calibration request: for which fingerprint, why, when, and with which settings,
    declared as its file holds it (a soak request is the same document of another kind)."""

    schema_version: int = REQUEST_SCHEMA
    kind: str = REQUEST_KIND
    named: FingerprintRef = msgspec.field(name="fingerprint")
    reason: str
    requested_at: float
    settings: dict[str, object] = msgspec.field(default_factory=dict)

    @classmethod
    def of(
        cls,
        fingerprint: str,
        fields: Mapping[str, object],
        reason: str,
        now: float,
        settings: Mapping[str, object],
        kind: str = REQUEST_KIND,
    ) -> RequestDocument:
        named = FingerprintRef(fingerprint, dict(fields))
        return cls(kind=kind, named=named, reason=reason, requested_at=now, settings=dict(settings))

    @property
    def fingerprint(self) -> str:
        return self.named.id

    @property
    def fingerprint_fields(self) -> dict[str, object]:
        return self.named.fields


def read_request_document(data: object) -> RequestDocument:
    """Raises MalformedJson naming the bad field's path, from `request`."""
    with json_fields.within("request"):
        return checked(data, RequestDocument)


def request_path(layout: StateLayout, fingerprint: str) -> Path:
    return layout.requests / f"{fingerprint}.json"


def read_request(path: Path) -> RequestDocument:
    """A request file; EvidenceError (MalformedJson naming the field) when unusable."""
    data = read_json(path, kind="calibration request", schema_version=REQUEST_SCHEMA)
    return read_request_document(data)


def write_request(
    layout: StateLayout,
    fingerprint: str,
    fields: Mapping[str, object],
    reason: str,
    now: float,
    settings: Mapping[str, object],
) -> Path:
    path = request_path(layout, fingerprint)
    try:
        standing: RequestDocument | None = read_request(path)
    except EvidenceError:
        standing = None
    if standing is not None and (standing.reason, standing.settings) == (reason, dict(settings)):
        return path  # asked every storm pass: the standing request already says this
    request = RequestDocument.of(fingerprint, fields, reason, now, settings)
    atomic_write_json(path, as_json(request))
    return path


def pending_requests(layout: StateLayout) -> list[RequestDocument]:
    """The standing requests; a damaged file is skipped (`slots allowed` writes it again)."""
    found = []
    for path in sorted(layout.requests.glob("*.json")):
        try:
            found.append(read_request(path))
        except EvidenceError:
            continue
    return found


def clear_request(layout: StateLayout, fingerprint: str) -> bool:
    path = request_path(layout, fingerprint)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


__all__ = [
    "REQUEST_SCHEMA",
    "FingerprintRef",
    "RequestDocument",
    "read_request_document",
    "clear_request",
    "pending_requests",
    "read_request",
    "request_path",
    "write_request",
]
