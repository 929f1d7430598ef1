"""Evidence, checkpoints and calibration requests on disk (design §7).

evidence/<fp>.json       the recorded sweep for one fingerprint (schema below)
progress/<fp>-<corpus>-<method>.json   completed steps of a sweep in progress
requests/<fp>.json       written by `allowed` when evidence is missing or stale

Evidence schema (schema_version 1): kind, fingerprint {id, fields}, created_at (epoch s),
corpus {sha256, pool_sha256, window, segments, turns}, method {hash, slots, max_tokens,
temperature, seed, runner, window}, bounds (those in force when recorded), steps (StepRecord
JSON, raw), verdicts (as judged when recorded), decision {ideal, reason, stop_reason},
clean, recorded, production_version, runner_version, runs_dir, notes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EvidenceError
from ..files import atomic_write_json, canonical_json, read_json
from ..state import StateLayout

if TYPE_CHECKING:
    from .records import StepRecord

# The step records are imported where steps are parsed, not above: `slots allowed` without
# evidence for today's fingerprint reads only the other files' fingerprints.

EVIDENCE_SCHEMA = 1
PROGRESS_SCHEMA = 1
REQUEST_SCHEMA = 1
SECONDS_PER_DAY = 86_400.0


def method_hash(method: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(dict(method)).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Evidence:
    path: Path | None
    data: dict[str, Any]
    steps: tuple[StepRecord, ...]

    @property
    def fingerprint(self) -> str:
        return str(self.data["fingerprint"]["id"])

    @property
    def fingerprint_fields(self) -> dict[str, Any]:
        return _fingerprint_fields(self.data)

    @property
    def created_at(self) -> float:
        return float(self.data["created_at"])

    def age_days(self, now: float) -> float:
        return age_in_days(self.created_at, now)


def age_in_days(created_at: float, now: float) -> float:
    return max(0.0, (now - created_at) / SECONDS_PER_DAY)


def _fingerprint_fields(data: dict[str, Any]) -> dict[str, Any]:
    fields = data["fingerprint"].get("fields")
    return dict(fields) if isinstance(fields, dict) else {}


def _check_header(data: dict[str, Any], where: str) -> None:
    if data.get("kind") != "vibey-gh-evidence":
        raise EvidenceError(f"{where} is not a vibey-gh evidence file")
    try:
        fp = data["fingerprint"]
        if not isinstance(fp, dict) or not isinstance(fp.get("id"), str):
            raise KeyError("fingerprint.id")
        float(data["created_at"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EvidenceError(f"{where} is malformed: missing or bad {exc}") from None


def evidence_from_json(data: dict[str, Any], path: Path | None) -> Evidence:
    from .records import StepRecord

    where = str(path) if path else "evidence"
    _check_header(data, where)
    try:
        steps = tuple(StepRecord.from_json(s) for s in data["steps"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EvidenceError(f"{where} is malformed: missing or bad {exc}") from None
    return Evidence(path, data, steps)


def load_evidence(path: Path) -> Evidence:
    data = read_json(path, kind="evidence", schema_version=EVIDENCE_SCHEMA)
    return evidence_from_json(data, path)


def read_fingerprint_fields(path: Path) -> dict[str, Any]:
    """The fingerprint fields an evidence file was recorded under, without parsing its steps."""
    data = read_json(path, kind="evidence", schema_version=EVIDENCE_SCHEMA)
    _check_header(data, str(path))
    return _fingerprint_fields(data)


def evidence_path(layout: StateLayout, fingerprint: str) -> Path:
    return layout.evidence / f"{fingerprint}.json"


def iter_evidence_paths(layout: StateLayout) -> Iterator[Path]:
    yield from sorted(layout.evidence.glob("*.json"))


def write_evidence(path: Path, data: dict[str, Any]) -> None:
    atomic_write_json(path, data)


# --- checkpoints -----------------------------------------------------------------------------


def progress_path(layout: StateLayout, fingerprint: str, corpus_sha: str, method: str) -> Path:
    return layout.progress / f"{fingerprint}-{corpus_sha[:12]}-{method}.json"


def save_progress(path: Path, key: Mapping[str, Any], steps: list[StepRecord]) -> None:
    atomic_write_json(
        path,
        {
            "schema_version": PROGRESS_SCHEMA,
            "kind": "vibey-gh-progress",
            "key": dict(key),
            "steps": [s.to_json() for s in steps],
        },
    )


def load_progress(path: Path, key: Mapping[str, Any]) -> list[StepRecord]:
    """Completed steps of an interrupted sweep with this key; [] when there is none."""
    from .records import StepRecord

    if not path.exists():
        return []
    data = read_json(path, kind="progress", schema_version=PROGRESS_SCHEMA)
    if data.get("key") != dict(key):
        raise EvidenceError(f"progress file {path} belongs to another sweep; remove it to restart")
    try:
        return [StepRecord.from_json(s) for s in data["steps"]]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EvidenceError(f"progress file {path} is malformed ({exc}); remove it") from None


# --- calibration requests --------------------------------------------------------------------


def request_path(layout: StateLayout, fingerprint: str) -> Path:
    return layout.requests / f"{fingerprint}.json"


def write_request(
    layout: StateLayout,
    fingerprint: str,
    fields: Mapping[str, Any],
    reason: str,
    now: float,
    settings: Mapping[str, Any],
) -> Path:
    path = request_path(layout, fingerprint)
    try:
        standing = read_json(path, kind="calibration request", schema_version=REQUEST_SCHEMA)
    except EvidenceError:
        standing = {}
    if standing.get("reason") == reason and standing.get("settings") == dict(settings):
        return path  # asked every storm pass: the standing request already says this
    atomic_write_json(
        path,
        {
            "schema_version": REQUEST_SCHEMA,
            "kind": "vibey-gh-calibration-request",
            "fingerprint": {"id": fingerprint, "fields": dict(fields)},
            "reason": reason,
            "requested_at": now,
            "settings": dict(settings),
        },
    )
    return path


def pending_requests(layout: StateLayout) -> list[dict[str, Any]]:
    found = []
    for path in sorted(layout.requests.glob("*.json")):
        try:
            found.append(read_json(path, kind="calibration request", schema_version=REQUEST_SCHEMA))
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
