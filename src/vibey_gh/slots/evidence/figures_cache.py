"""The figures of each evidence file, kept beside it: `cache/figures/<fingerprint>.json`.

`slots allowed` judges on every call and an evidence file holds every answer of every turn;
parsing one of a megabyte costs tens of milliseconds. So the figures (`judging.figures`) are
kept, and rebuilt from the evidence whenever anything about them does not hold. They are
derived data, never the record, and never trusted:

* they are keyed to the exact bytes of the evidence file they were made from (its sha256), the
  integrity digest recorded inside it, its fingerprint, the cache's own schema, the figures'
  version and the tool's version: a rewritten, renamed or hard-linked evidence file, or the
  figures of another one copied beside it, is rebuilt;
* the cache file carries a digest of its own content, so a figure edited by hand (a peak, a
  standard error) is rebuilt — like the evidence's digest, this stops mistakes and careless
  edits, not someone who recomputes it (docs/reference/evidence.md);
* every figure is checked for its type and range on reading (as `SweepFigures` declares it);
* what the answer rests on besides the figures is read from the evidence's own bytes, not from
  the cache: when it was recorded (`created_at`), that it was recorded as this device's
  evidence (`recorded: true`) and the fingerprint it names. Evidence whose bytes do not show
  these in the layout this tool writes is judged from the evidence itself.

A cache that fails any of this is as good as absent: the caller rebuilds it from the evidence.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ... import __version__
from ...errors import EvidenceError, MalformedJson
from ...files import (
    as_read_back,
    canonical_json,
    keep_cache_json,
    read_cache_text,
    sha256_hex,
)
from ...guarded import DEFAULT_LIMIT, InputProblem, loads_json, read_regular_bytes
from ...interfaces import json_fields
from ...interfaces.schema import as_json, checked
from ..judging import figures as figures_module

if TYPE_CHECKING:
    from ...state import StateLayout
    from ..judging.figures import SweepFigures

FIGURES_SCHEMA = 2
FIGURES_KIND = "vibey-gh-figures"
SEAL_KEY = "seal"
EVIDENCE_LIMIT = DEFAULT_LIMIT
# Top-level lines of an evidence file as this tool writes it (sorted keys, two-space indent): a
# JSON string holds no raw line break, so a line starting with exactly two spaces is top level.
_CREATED_AT = re.compile(rb'\n  "created_at": (-?[0-9][0-9.eE+-]*),\n')
_RECORDED_TRUE = b'\n  "recorded": true,\n'


class EvidenceBytes:
    """An evidence file's bytes as read once: the figures and the answer come from these.

    A plain class, not a dataclass: `slots allowed` creates every class it imports, and a
    dataclass costs it most of a millisecond."""

    __slots__ = ("path", "raw", "sha256")

    def __init__(self, path: Path, raw: bytes) -> None:
        self.path = path
        self.raw = raw
        self.sha256 = sha256_hex(raw)


def read_evidence_bytes(path: Path) -> EvidenceBytes:
    """The evidence file's bytes (a regular file, size-capped); EvidenceError saying why not."""
    try:
        return EvidenceBytes(path, read_regular_bytes(path, limit=EVIDENCE_LIMIT))
    except FileNotFoundError:
        raise EvidenceError(f"evidence file not found: {path}") from None
    except InputProblem as problem:
        raise EvidenceError(f"evidence file {path} {problem}") from None


def figures_path(layout: StateLayout, fingerprint: str) -> Path:
    return layout.cache / "figures" / f"{fingerprint}.json"


def evidence_identity(evidence: Path) -> dict[str, str]:
    """What stored figures are keyed by: the sha256 of the evidence file's bytes."""
    return {"sha256": read_evidence_bytes(evidence).sha256}


def created_at_in(raw: bytes) -> float | None:
    """The evidence's own `created_at`, read from its bytes in the layout this tool writes;
    None when they are in another layout (then the evidence is parsed instead)."""
    found = _CREATED_AT.findall(raw)
    if len(found) != 1:
        return None
    try:
        value = float(found[0])
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


class EvidenceKey(TypedDict):
    """The evidence the figures were made from: its bytes' sha256 and its integrity digest."""

    sha256: str | None
    integrity: str


class CacheKey(TypedDict):
    """What a cache file must say before its figures are used (the file adds `figures`, and
    `seal`: the sha256 of everything else)."""

    schema_version: int
    kind: str
    figures_version: int
    tool_version: str
    fingerprint: str
    evidence: EvidenceKey


def read_cache_key(data: object) -> CacheKey:
    """A cache file's key as declared (`CacheKey`, the figures and seal left aside);
    MalformedJson naming the bad field."""
    with json_fields.within("figures cache"):
        return checked(data, CacheKey)


def _sealed(body: dict[str, object]) -> str:
    return sha256_hex(canonical_json(body).encode("utf-8"))


def _key(fingerprint: str, identity: dict[str, str], integrity: str) -> CacheKey:
    return CacheKey(
        schema_version=FIGURES_SCHEMA,
        kind=FIGURES_KIND,
        figures_version=figures_module.FIGURES_VERSION,
        tool_version=__version__,
        fingerprint=fingerprint,
        evidence=EvidenceKey(sha256=identity.get("sha256"), integrity=integrity),
    )


def read_figures(
    layout: StateLayout, fingerprint: str, evidence: Path | EvidenceBytes
) -> tuple[float, SweepFigures] | None:
    """(created_at, figures) kept for exactly these evidence bytes, or None: rebuild them.

    `created_at` is the evidence's, read from its bytes."""
    try:
        held = evidence if isinstance(evidence, EvidenceBytes) else read_evidence_bytes(evidence)
    except (EvidenceError, OSError):
        return None
    # what cannot be read in the cache's place (a FIFO, a folder) is skipped with a warning
    text = read_cache_text(figures_path(layout, fingerprint))
    try:
        data = loads_json(text) if text is not None else None
    except InputProblem:
        return None
    if not isinstance(data, dict):
        return None
    created_at = created_at_in(held.raw)
    if created_at is None or _RECORDED_TRUE not in held.raw:
        return None
    try:
        key = read_cache_key(data)
    except MalformedJson:
        return None
    integrity = key["evidence"]["integrity"]
    if not re.fullmatch(r"[0-9a-f]{64}", integrity):
        return None
    expected = _key(fingerprint, {"sha256": held.sha256}, integrity)
    if key != expected:
        return None
    # the seal is checked on the file as read, every field and nothing more
    body = {name: value for name, value in data.items() if name != SEAL_KEY}
    if data.get(SEAL_KEY) != _sealed(body) or set(body) != {*expected, "figures"}:
        return None
    # the fingerprint and the digest the figures were made for are named in the evidence
    named = f'"id": "{fingerprint}"'.encode()
    if named not in held.raw or f'"digest": "{integrity}"'.encode() not in held.raw:
        return None
    try:
        return created_at, checked(data["figures"], figures_module.SweepFigures)
    except MalformedJson:
        return None


def save_figures(
    layout: StateLayout,
    fingerprint: str,
    identity: dict[str, str],
    integrity: str,
    figures: SweepFigures,
) -> None:
    """Keep the figures made from the evidence bytes whose `identity` (`evidence_identity`,
    `EvidenceBytes.sha256`) and recorded integrity digest are given.

    A failure to write only costs the next call a rebuild, so it is not an error.
    """
    body: dict[str, object] = {
        **_key(fingerprint, identity, integrity),
        "figures": as_json(figures),
    }
    # sealed as it reads back, so the seal holds for what is read
    body = as_read_back(body)
    keep_cache_json(figures_path(layout, fingerprint), {**body, SEAL_KEY: _sealed(body)})
