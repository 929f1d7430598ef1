"""Calibration requests: written by `slots allowed` when evidence is missing, stale or
unusable, read by the storm (which calibrates between storms) and cleared by a calibration.

requests/<fp>.json holds {schema_version, kind, fingerprint {id, fields}, reason,
requested_at, settings}; a soak request (`soak_file`) is the same document in requests/soak/.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from ...errors import EvidenceError
from ...files import atomic_write_json, ensure_private_dir, read_json
from ...interfaces import json_fields
from ...interfaces.schema import as_json, checked
from ...state import StateLayout

REQUEST_SCHEMA = 1
REQUEST_KIND = "vibey-gh-calibration-request"
SOAK_REQUEST_KIND = "vibey-gh-soak-request"


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


class RequestFolder(msgspec.Struct, frozen=True):
    """Where requests of one kind stand, one file a fingerprint: calibration requests in
    requests/, soak requests in requests/soak/ (the same document under its own kind).
    `noun` names such a file in errors."""

    subfolder: str
    kind: str
    noun: str

    def folder(self, layout: StateLayout) -> Path:
        return layout.requests / self.subfolder

    def path(self, layout: StateLayout, fingerprint: str) -> Path:
        return self.folder(layout) / f"{fingerprint}.json"

    def read(self, path: Path) -> RequestDocument:
        """A request file; EvidenceError (MalformedJson naming the field) when unusable."""
        data = read_json(path, kind=self.noun, schema_version=REQUEST_SCHEMA)
        return read_request_document(data)

    def standing(self, path: Path) -> RequestDocument | None:
        """The request at `path`; None when there is none or it is unusable."""
        try:
            return self.read(path)
        except EvidenceError:
            return None

    def write(
        self,
        layout: StateLayout,
        fingerprint: str,
        fields: Mapping[str, object],
        reason: str,
        now: float,
        settings: Mapping[str, object],
    ) -> Path:
        """Stand a request; a standing one that says the same is left as it is (asked again on
        every storm pass)."""
        path = self.path(layout, fingerprint)
        standing = self.standing(path)
        if standing is not None and (standing.reason, dict(standing.settings)) == (
            reason,
            dict(settings),
        ):
            return path
        request = RequestDocument.of(fingerprint, fields, reason, now, settings, self.kind)
        ensure_private_dir(path.parent)
        atomic_write_json(path, as_json(request))
        return path

    def pending(self, layout: StateLayout) -> list[RequestDocument]:
        """The standing requests; a damaged file is skipped (`slots allowed` writes it again)."""
        folder = self.folder(layout)
        found = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            request = self.standing(path)
            if request is not None:
                found.append(request)
        return found

    def clear(self, layout: StateLayout, fingerprint: str) -> bool:
        try:
            self.path(layout, fingerprint).unlink()
        except FileNotFoundError:
            return False
        return True


CALIBRATION_REQUESTS = RequestFolder("", REQUEST_KIND, "calibration request")
SOAK_REQUESTS = RequestFolder("soak", SOAK_REQUEST_KIND, "soak request")

request_path = CALIBRATION_REQUESTS.path
read_request = CALIBRATION_REQUESTS.read
write_request = CALIBRATION_REQUESTS.write
pending_requests = CALIBRATION_REQUESTS.pending
clear_request = CALIBRATION_REQUESTS.clear


__all__ = [
    "CALIBRATION_REQUESTS",
    "REQUEST_SCHEMA",
    "FingerprintRef",
    "SOAK_REQUESTS",
    "RequestDocument",
    "RequestFolder",
    "read_request_document",
    "clear_request",
    "pending_requests",
    "read_request",
    "request_path",
    "write_request",
]
