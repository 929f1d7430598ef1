"""A soak on disk: its own file beside the evidence, sealed like evidence, and soak requests.

evidence/soak/<fp>-n<N>.json   the soak at N for one fingerprint (the one it replaces: kept)
requests/soak/<fp>.json        written by `allowed` when `require_soak` wants one

Soak requests are the calibration requests' documents (`requests.SOAK_REQUESTS`).

A soak file holds {schema_version, kind, fingerprint {id, fields}, created_at, slots,
duration_s (asked), measured_s, window_s, complete, corpus_sha256, method, bounds, spans
(each span's window and its decided units' end times), series (each window's throughput and
its readings' mean and peak), judgement (`judging.drift.SoakJudgement`), runs_dir,
integrity}. Its integrity is evidence's: the fingerprint id recomputed from the fields, and
the sha256 of the canonical JSON of the rest (`store.check_integrity`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ...errors import EvidenceError, MalformedJson
from ...files import atomic_write_json, ensure_private_dir, read_json
from ...interfaces import json_fields
from ...interfaces.bounds import Bounds as BoundsType
from ...interfaces.schema import checked
from ...state import StateLayout
from ..judging.readings.drift import HOLDS, SoakSpan, judge_soak
from .requests import SOAK_REQUESTS
from .store import check_integrity, seal_evidence

if TYPE_CHECKING:
    from ...interfaces.bounds import Bounds
    from ..judging.readings.drift import SoakSpan

SOAK_SCHEMA = 1
SOAK_KIND = "vibey-gh-soak"
_NAME = re.compile(r"([0-9a-f]{16})-n(\d+)")


class SoakRecord(msgspec.Struct, frozen=True):
    """A soak as recorded, read back; `judgement` is the drift judge's JSON."""

    path: Path
    data: Mapping[str, Any]

    @property
    def fingerprint(self) -> str:
        return str(self.data["fingerprint"]["id"])

    @property
    def slots(self) -> int:
        return int(self.data["slots"])

    @property
    def created_at(self) -> float:
        return float(self.data["created_at"])

    @property
    def measured_s(self) -> float:
        return float(self.data["measured_s"])

    @property
    def judgement(self) -> Mapping[str, Any]:
        value = self.data.get("judgement")
        return value if isinstance(value, dict) else {}

    @property
    def recorded_verdict(self) -> str:
        """The verdict as written when the soak ended (never decides anything alone)."""
        return str(self.judgement.get("verdict", "unknown"))

    @property
    def verdict(self) -> str:
        return self.judged().verdict

    @property
    def holds(self) -> bool:
        return self.judged().holds

    def judged(self, bounds: Bounds | None = None) -> SoakVerdict:
        """The soak judged again from its own spans (each decided unit's end time) under
        `bounds` (default: those it recorded), as sweep evidence is re-judged from its steps:
        the recorded verdict can only lower this one (a bound broken at a tick, memory that
        grew: the ticks are in the run folder, not the file), never raise it."""
        recorded_holds = self.judgement.get("holds") is True and self.recorded_verdict == HOLDS
        spans, window_s, problem = _spans_of(self.data)
        if problem is not None and not recorded_holds:
            return SoakVerdict(self.recorded_verdict, False, None)
        if problem is not None:
            return SoakVerdict("unjudged", False, f"its windows cannot be read: {problem}")
        if bounds is None:
            recorded = self.data.get("bounds")
            try:
                bounds = checked(recorded, BoundsType) if isinstance(recorded, dict) else None
            except MalformedJson as exc:
                return SoakVerdict("unjudged", False, f"its bounds cannot be read: {exc}")
            bounds = bounds or BoundsType()
        again = judge_soak(spans, (), bounds, window_s)
        if again.verdict != HOLDS:
            said = f"re-judged from its windows: {again.verdict}"
            if again.reasons:
                said += f" ({again.reasons[0]})"
            return SoakVerdict(again.verdict, False, said)
        if not recorded_holds:
            return SoakVerdict(self.recorded_verdict, False, None)
        return SoakVerdict(HOLDS, True, None)

    @property
    def series(self) -> list[Mapping[str, Any]]:
        value = self.data.get("series")
        return [w for w in value if isinstance(w, dict)] if isinstance(value, list) else []


class SoakVerdict(msgspec.Struct, frozen=True):
    """A soak's verdict as read today; `rejudged` says why it differs from the one recorded."""

    verdict: str
    holds: bool
    rejudged: str | None


def _spans_of(data: Mapping[str, Any]) -> tuple[list[SoakSpan], float, str | None]:
    """The soak's spans and window length, or why they cannot be read."""
    window_s = data.get("window_s")
    if isinstance(window_s, bool) or not isinstance(window_s, int | float) or not window_s > 0:
        return [], 0.0, "no window length"
    raw = data.get("spans")
    if not isinstance(raw, list):
        return [], 0.0, "no spans"
    spans = []
    for span in raw:
        fields = span if isinstance(span, dict) else {}
        ends = fields.get("ends")
        numbers = [
            fields.get("start"),
            fields.get("end"),
            *(ends if isinstance(ends, list) else []),
        ]
        if not isinstance(ends, list) or not all(_is_number(n) for n in numbers):
            return [], 0.0, "a span that is not numbers"
        start, end, *decided = (float(n) for n in numbers)
        spans.append(SoakSpan(start, end, tuple(decided)))
    return spans, float(window_s), None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def soak_folder(layout: StateLayout) -> Path:
    return layout.evidence / "soak"


def soak_path(layout: StateLayout, fingerprint: str, slots: int) -> Path:
    return soak_folder(layout) / f"{fingerprint}-n{slots}.json"


def sealed_soak(data: Mapping[str, Any]) -> dict[str, Any]:
    """The soak file's content: `data` with its schema, kind and seal."""
    return seal_evidence({"schema_version": SOAK_SCHEMA, "kind": SOAK_KIND, **data})


def write_soak(path: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    sealed = sealed_soak(data)
    ensure_private_dir(path.parent)
    atomic_write_json(path, sealed)
    return sealed


def load_soak(path: Path) -> SoakRecord:
    """A soak file that is what was recorded; EvidenceError otherwise."""
    data = read_json(path, kind="soak", schema_version=SOAK_SCHEMA)
    if data.get("kind") != SOAK_KIND:
        raise EvidenceError(f"soak file {path} is not a soak ({data.get('kind')!r})")
    try:
        with json_fields.within("soak"):
            json_fields.integer(data, "slots")
            json_fields.number(data, "created_at")
            json_fields.number(data, "measured_s")
            json_fields.mapping(data, "judgement")
            fingerprint = json_fields.mapping(data, "fingerprint", json_fields.REQUIRED)
            with json_fields.within("fingerprint"):
                json_fields.text(fingerprint, "id")
        check_integrity(data, None)
    except (KeyError, TypeError) as exc:
        raise MalformedJson(f"soak file {path}: {exc}") from None
    named = _NAME.fullmatch(path.stem)
    recorded = json_fields.mapping(data, "fingerprint").get("id")
    if named and (named.group(1), int(named.group(2))) != (recorded, data.get("slots")):
        raise EvidenceError(f"soak file {path} holds another fingerprint's or N's soak")
    return SoakRecord(path, data)


def soaks_for(layout: StateLayout, fingerprint: str) -> list[tuple[Path, SoakRecord | str]]:
    """Every soak file of `fingerprint`, by N: the record, or why it is unusable."""
    folder = layout.root / "evidence" / "soak"
    found: list[tuple[Path, SoakRecord | str]] = []
    for path in sorted(folder.glob(f"{fingerprint}-n*.json")) if folder.is_dir() else []:
        try:
            found.append((path, load_soak(path)))
        except EvidenceError as exc:
            found.append((path, str(exc)))
    return found


soak_request_path = SOAK_REQUESTS.path
write_soak_request = SOAK_REQUESTS.write
read_soak_request = SOAK_REQUESTS.standing
clear_soak_request = SOAK_REQUESTS.clear
pending_soak_requests = SOAK_REQUESTS.pending
