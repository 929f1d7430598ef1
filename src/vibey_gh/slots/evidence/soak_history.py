"""Soaks that were a fingerprint's soak at N once: kept as replaced sweeps are (`history`).

evidence/history/<fp>/soak-n<N>/<time>-<corpus>.json   a soak file, byte for byte

A soak measures for hours; like a sweep, what it measured is never overwritten without being
kept. A new soak that ran to its end replaces the one at the same N after the old file is
copied here; a stopped soak (shorter than asked) does not take the place of a complete one
that still reads: it is kept here itself, and the complete one goes on answering. The copies
are sealed soak files (`load_soak` reads them) in the same bounded history as sweeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ...errors import EvidenceError
from ...files import json_file_text
from ...guarded import InputProblem, read_regular_bytes
from ...interfaces.durations import format_duration
from ...state import StateLayout
from .history import _date, history_folder, keep_copy
from .soak_file import SoakRecord, load_soak, sealed_soak, write_soak

SOAK_PART = "soak-n{slots}"


class SoakKept(msgspec.Struct, frozen=True):
    """What happened to the soak file at N when a soak was recorded: `path` holds the soak
    that answers now; `kept` is the copy put in the history (the replaced soak, or the new
    one when it did not replace a complete one), None when there was nothing to keep."""

    path: Path
    kept: Path | None
    kept_record: SoakRecord | None
    replaced: bool

    def sentence(self) -> str | None:
        """The closing line naming what was kept, or None."""
        if self.kept is None:
            return None
        what = describe_soak(self.kept_record) if self.kept_record else "an unreadable soak file"
        if self.replaced:
            return f"replaced {what}, kept at {self.kept}"
        return (
            f"this soak stopped before its end: kept at {self.kept}; the complete soak at "
            f"{self.path} still answers"
        )


def describe_soak(record: SoakRecord) -> str:
    """'the soak of 2026-12-01 10:00 UTC (N=3, holds, 2h measured)'."""
    facts = [f"N={record.slots}", record.verdict, f"{format_duration(record.measured_s)} measured"]
    if record.data.get("complete") is not True:
        facts.append("stopped")
    return f"the soak of {_date(record.created_at)} ({', '.join(facts)})"


def record_soak_file(
    layout: StateLayout, path: Path, fingerprint: str, slots: int, data: Mapping[str, Any]
) -> SoakKept:
    """Write the soak `data` at `path` without losing the soak there (see the module)."""
    part = Path(fingerprint) / SOAK_PART.format(slots=slots)
    try:
        raw = read_regular_bytes(path)
    except (OSError, InputProblem):
        raw = None  # nothing there (or nothing readable: the write says what is in the way)
    if raw is None:
        write_soak(path, data)
        return SoakKept(path, None, None, replaced=False)
    old = _readable(path)
    if data.get("complete") is not True and old is not None and old.data.get("complete") is True:
        new = json_file_text(sealed_soak(data)).encode()
        kept = keep_copy(layout, part, new, _number(data.get("created_at")), _corpus(data))
        return SoakKept(path, kept, _readable(kept), replaced=False)
    kept = keep_copy(layout, part, raw, _created(old), _corpus(old.data) if old else None)
    write_soak(path, data)
    return SoakKept(path, kept, old, replaced=True)


def _readable(path: Path) -> SoakRecord | None:
    try:
        return load_soak(path)
    except EvidenceError:
        return None


def _created(record: SoakRecord | None) -> float | None:
    return _number(record.data.get("created_at")) if record is not None else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _corpus(data: Mapping[str, Any]) -> str | None:
    corpus = data.get("corpus_sha256")
    return corpus if isinstance(corpus, str) and corpus else None


def kept_soaks(layout: StateLayout, fingerprint: str) -> list[tuple[Path, SoakRecord | str]]:
    """The soaks kept for `fingerprint` at every N, newest first: the record, or why it is
    unusable."""
    folder = history_folder(layout, fingerprint)
    if not folder.is_dir() or folder.is_symlink():
        return []
    found: list[tuple[Path, SoakRecord | str]] = []
    parts = sorted(p for p in folder.glob("soak-n*") if p.is_dir() and not p.is_symlink())
    for part in parts:
        for path in sorted(part.glob("*.json"), reverse=True):
            try:
                found.append((path, load_soak(path)))
            except EvidenceError as exc:
                found.append((path, str(exc)))
    return sorted(found, key=lambda item: item[0].name, reverse=True)
