"""Evidence on disk (design §7): where it lives, its integrity, and the one reader and writer
of its file (the document's fields are in `document.py`, checkpoints in `checkpoints.py`,
requests in `requests.py`).

evidence/<fp>.json       the recorded sweep for one fingerprint (schema below)
progress/<fp>-<corpus>-<method>.json   completed steps of a sweep in progress
requests/<fp>.json       written by `allowed` when evidence is missing or stale

Evidence schema (schema_version 1): kind, fingerprint {id, fields}, created_at (epoch s),
corpus {sha256, pool_sha256, window, segments, turns}, method {hash, slots, max_tokens,
temperature, seed, runner, window}, bounds (those in force when recorded), steps (StepRecord
JSON, raw), verdicts (as judged when recorded), decision {ideal, reason, stop_reason},
clean, recorded, production_version, runner_version, runs_dir, notes, integrity.

Integrity (see `check_integrity`): the fingerprint id is recomputed from the fields recorded
inside the evidence and must equal the recorded id and the file's name, and `integrity` holds
the sha256 of the canonical JSON of everything else, so a file copied to another fingerprint's
name, or edited by hand (a figure, a bound, a field), is unusable evidence. This guards against
mistakes and careless edits, not against someone who sets out to forge evidence: the digest is
not a signature, and whoever can write the state folder can recompute it. Evidence without a
digest (written before digests were recorded) is unusable too, so an edit cannot hide by
deleting the digest; `slots allowed` answers 1 and requests a calibration.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ...errors import EvidenceError, MalformedJson
from ...files import (
    as_read_back,
    atomic_write_json,
    canonical_json,
    read_json,
    sha256_hex,
)
from ...guarded import InputProblem, loads_json_bytes
from ...interfaces import json_fields
from ...state import StateLayout
from .fingerprint import fingerprint_id, measured_on
from .schema import EVIDENCE_KIND, EVIDENCE_SCHEMA, INTEGRITY_KEY

if TYPE_CHECKING:
    from ..judging.records import StepRecord
    from .document import EvidenceDocument
    from .fingerprint import MeasuredOn

# The document and the step records are imported where a file is parsed, not above: `slots
# allowed` with the figures cache current reads no evidence file at all.

SECONDS_PER_DAY = 86_400.0
INTEGRITY_ALGORITHM = "sha256"
# Clocks of the machines sharing a state volume may disagree by this much; evidence dated
# further ahead than this was not recorded by a clock anyone can trust.
CLOCK_SKEW_TOLERANCE_S = 300.0
EDITED = "evidence edited after it was recorded"
_FINGERPRINT_NAME = re.compile(r"[0-9a-f]{16}")


def method_hash(method: Mapping[str, object]) -> str:
    return sha256_hex(canonical_json(dict(method)).encode())[:12]


class Evidence(msgspec.Struct, frozen=True, dict=True):
    """An evidence document and the file it was read from (None: not yet written).

    `dict=True` gives its instances the `__dict__` its cached properties are kept in."""

    path: Path | None
    document: EvidenceDocument

    @property
    def steps(self) -> tuple[StepRecord, ...]:
        return self.document.steps

    @property
    def fingerprint(self) -> str:
        return self.document.fingerprint

    @property
    def fingerprint_fields(self) -> dict[str, object]:
        return dict(self.document.fingerprint_fields)

    @property
    def created_at(self) -> float:
        return self.document.created_at

    @cached_property
    def measured_on(self) -> MeasuredOn:
        """The machine and runner, typed, from the fingerprint fields."""
        return measured_on(self.document.fingerprint_fields)

    @cached_property
    def data(self) -> dict[str, object]:
        """The document as JSON, as written."""
        return self.document.to_json()

    def age_days(self, now: float) -> float:
        return age_in_days(self.created_at, now)


def age_in_days(created_at: float, now: float) -> float:
    """Days since `created_at`; 0 for a date later than now (never counted from the future)."""
    return max(0.0, (now - created_at) / SECONDS_PER_DAY)


def future_date_problem(created_at: float, now: float) -> str | None:
    """Why evidence dated ahead of `now` beyond the skew tolerance is unusable, or None."""
    ahead = created_at - now
    if ahead <= CLOCK_SKEW_TOLERANCE_S:
        return None
    days = ahead / SECONDS_PER_DAY
    when = f"{days:.0f} days" if days >= 1 else f"{ahead / 60:.0f} minutes"
    return f"evidence dated {when} in the future (clock skew allowed: 5 minutes)"


def integrity_digest(data: Mapping[str, object]) -> str:
    """sha256 of the canonical JSON of the evidence without its integrity entry, as it reads
    back from disk (so tuples and the like hash as the lists they become)."""
    body = {key: value for key, value in data.items() if key != INTEGRITY_KEY}
    return sha256_hex(canonical_json(as_read_back(body)).encode("utf-8"))


def seal_evidence(data: Mapping[str, object]) -> dict[str, object]:
    """The evidence with its integrity digest recorded beside its content."""
    body = {key: value for key, value in data.items() if key != INTEGRITY_KEY}
    return {
        **body,
        INTEGRITY_KEY: {"algorithm": INTEGRITY_ALGORITHM, "digest": integrity_digest(body)},
    }


def check_integrity(data: dict[str, object], path: Path | None) -> None:
    """Raise EvidenceError unless the evidence is what was recorded, under its own name."""
    fingerprint = data.get("fingerprint")  # an object with an id: `_check_header` saw it
    recorded = str(fingerprint.get("id") if isinstance(fingerprint, dict) else None)
    computed = fingerprint_id(_fingerprint_fields(data))
    if computed != recorded:
        raise EvidenceError(
            f"{EDITED}: its fingerprint fields give {computed}, not the recorded {recorded}"
        )
    # A file named after a fingerprint (`<fp>.json` in the state, `slots-<fp>.json` under
    # --out) must hold that fingerprint's evidence; a file sent under another name (compared
    # with `slots compare`) is checked by its fields and digest alone.
    named = path.stem.removeprefix("slots-") if path is not None else ""
    if _FINGERPRINT_NAME.fullmatch(named) and named != recorded:
        raise EvidenceError(
            f"file named {named} holds the evidence of fingerprint {recorded} "
            "(copied from another fingerprint)"
        )
    seal = data.get(INTEGRITY_KEY)
    if not isinstance(seal, dict) or not isinstance(seal.get("digest"), str):
        raise EvidenceError(
            "evidence has no integrity digest (recorded by an older version); calibrate again"
        )
    if seal.get("algorithm") != INTEGRITY_ALGORITHM or seal["digest"] != integrity_digest(data):
        raise EvidenceError(f"{EDITED} (its integrity digest does not match)")


def _fingerprint_fields(data: dict[str, object]) -> dict[str, object]:
    fingerprint = data.get("fingerprint")
    fields = fingerprint.get("fields") if isinstance(fingerprint, dict) else None
    return dict(fields) if isinstance(fields, dict) else {}


def _check_header(data: dict[str, object], where: str) -> None:
    if data.get("kind") != EVIDENCE_KIND:
        raise EvidenceError(f"{where} is not a vibey-gh evidence file")
    try:
        with json_fields.within("evidence"):
            fingerprint = json_fields.mapping(data, "fingerprint", json_fields.REQUIRED)
            with json_fields.within("fingerprint"):
                json_fields.text(fingerprint, "id")
            created_at = json_fields.number(data, "created_at")
    except MalformedJson as exc:
        raise exc.in_file(where) from None
    if not math.isfinite(created_at):
        raise EvidenceError(f"{where} is malformed: created_at is {created_at}")


def evidence_from_json(data: dict[str, object], path: Path | None) -> Evidence:
    """The one reader of evidence JSON: MalformedJson naming the bad field's JSON path and,
    for a file, the file."""
    # lazy: the figures cache spares `slots allowed` the whole document's reader
    from .document import EvidenceDocument

    where = str(path) if path else "evidence"
    _check_header(data, where)
    try:
        document = EvidenceDocument.from_json(data)
    except MalformedJson as exc:
        raise exc.in_file(where) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # not a field the reader checks (it checks every one it reads): still one clear line
        raise EvidenceError(f"{where} is malformed: {type(exc).__name__}: {exc}") from None
    return Evidence(path, document)


def load_evidence(path: Path) -> Evidence:
    """Evidence from disk, refused unless it passes `check_integrity`."""
    data = read_json(path, kind="evidence", schema_version=EVIDENCE_SCHEMA)
    _check_header(data, str(path))
    check_integrity(data, path)
    return evidence_from_json(data, path)


def load_evidence_bytes(raw: bytes, path: Path) -> Evidence:
    """`load_evidence` of bytes already read from `path` (so what is judged is what was read)."""
    try:
        data = loads_json_bytes(raw)
    except InputProblem as problem:
        raise EvidenceError(f"evidence file {path} {problem}") from None
    if not isinstance(data, dict):
        raise EvidenceError(f"evidence file {path} does not hold a JSON object")
    if data.get("schema_version") != EVIDENCE_SCHEMA:
        raise EvidenceError(
            f"evidence file {path} has schema_version {data.get('schema_version')!r}; "
            f"this tool reads {EVIDENCE_SCHEMA}"
        )
    _check_header(data, str(path))
    check_integrity(data, path)
    return evidence_from_json(data, path)


def not_recorded_problem(evidence: Evidence) -> str | None:
    """Why `evidence` counts nowhere, or None: a sweep the calibration refused to record (its
    runner's version was not production's, no step was clean) is written to --out for the
    record only, sealed with `recorded: false`, and stays that wherever it is copied."""
    if evidence.document.recorded:
        return None
    why = next((note for note in evidence.document.notes if "not recorded" in note), None)
    return "a sweep that was not recorded as this device's evidence" + (f" ({why})" if why else "")


def recorded_digest(evidence: Evidence) -> str:
    """The integrity digest sealed into `evidence` (checked when it was loaded); the digest of
    its content for evidence not yet sealed."""
    seal = evidence.document.integrity or {}
    digest = seal.get("digest")
    return digest if isinstance(digest, str) else integrity_digest(evidence.data)


def read_fingerprint_fields(path: Path) -> dict[str, object]:
    """The fingerprint fields an evidence file was recorded under, without parsing its steps."""
    data = read_json(path, kind="evidence", schema_version=EVIDENCE_SCHEMA)
    _check_header(data, str(path))
    return _fingerprint_fields(data)


def evidence_path(layout: StateLayout, fingerprint: str, *, create: bool = True) -> Path:
    """Where a fingerprint's evidence lives; `create=False` looks without making the folder."""
    folder = layout.evidence if create else layout.root / "evidence"
    return folder / f"{fingerprint}.json"


def out_name(fingerprint: str, recorded: bool) -> str:
    """The file name of a sweep written to --out: `slots-<fp>.json` for recorded evidence; a
    sweep that was not recorded gets a name that is no fingerprint's, so neither its name nor
    a copy of it passes for the device's evidence."""
    return f"slots-{fingerprint}.json" if recorded else f"slots-{fingerprint}-not-recorded.json"


def iter_evidence_paths(layout: StateLayout) -> Iterator[Path]:
    """Evidence files present; none when the folder is missing (nothing is created)."""
    yield from sorted((layout.root / "evidence").glob("*.json"))


def sealed_digest(data: Mapping[str, object]) -> str:
    """The digest a sealed document (`sealed_json`) carries."""
    seal = data.get(INTEGRITY_KEY)
    digest = seal.get("digest") if isinstance(seal, dict) else None
    if not isinstance(digest, str):
        raise EvidenceError("the evidence is not sealed")
    return digest


def sealed_json(document: EvidenceDocument) -> dict[str, object]:
    """The one writer of evidence JSON: the document with its integrity digest."""
    return seal_evidence(document.to_json())


def write_evidence(path: Path, document: EvidenceDocument) -> dict[str, object]:
    """Write the sealed document atomically (0600); return the JSON written."""
    data = sealed_json(document)
    atomic_write_json(path, data)
    return data
