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
from ...state import StateLayout

REQUEST_SCHEMA = 1
REQUEST_KIND = "vibey-gh-calibration-request"


class RequestDocument(msgspec.Struct, frozen=True):
    """One calibration request: for which fingerprint, why, when, and with which settings."""

    fingerprint: str
    fingerprint_fields: Mapping[str, object]
    reason: str
    requested_at: float
    settings: Mapping[str, object]
    schema_version: int = REQUEST_SCHEMA

    def to_json(self) -> dict[str, object]:
        return {
            "schema_version": self.schema_version,
            "kind": REQUEST_KIND,
            "fingerprint": {"id": self.fingerprint, "fields": dict(self.fingerprint_fields)},
            "reason": self.reason,
            "requested_at": self.requested_at,
            "settings": dict(self.settings),
        }

    @classmethod
    def from_json(cls, data: object) -> RequestDocument:
        """Raises MalformedJson naming the bad field's path, from `request`."""
        with json_fields.within("request"):
            fingerprint = json_fields.mapping(data, "fingerprint", json_fields.REQUIRED)
            with json_fields.within("fingerprint"):
                fingerprint_id = json_fields.text(fingerprint, "id")
                fields = json_fields.mapping(fingerprint, "fields")
            return cls(
                schema_version=json_fields.integer(data, "schema_version", REQUEST_SCHEMA),
                fingerprint=fingerprint_id,
                fingerprint_fields=fields,
                reason=json_fields.text(data, "reason"),
                requested_at=json_fields.number(data, "requested_at"),
                settings=json_fields.mapping(data, "settings"),
            )


def request_path(layout: StateLayout, fingerprint: str) -> Path:
    return layout.requests / f"{fingerprint}.json"


def read_request(path: Path) -> RequestDocument:
    """A request file; EvidenceError (MalformedJson naming the field) when unusable."""
    data = read_json(path, kind="calibration request", schema_version=REQUEST_SCHEMA)
    return RequestDocument.from_json(data)


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
    request = RequestDocument(fingerprint, dict(fields), reason, now, dict(settings))
    atomic_write_json(path, request.to_json())
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
    "RequestDocument",
    "clear_request",
    "pending_requests",
    "read_request",
    "request_path",
    "write_request",
]
