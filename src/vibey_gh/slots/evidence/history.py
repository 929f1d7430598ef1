"""Sweeps that were this device's evidence once: kept when a newer sweep replaces them.

evidence/history/<fp>/<time>-<corpus>.json   the evidence a calibration replaced, byte for byte

A calibration measures for minutes or hours; its evidence is the one thing the tool cannot make
again without the machine. So evidence is replaced only by a complete sweep (a paused or
stopped one keeps its steps in the checkpoint and leaves the complete evidence answering), and
what it replaces is first copied here, as it was on disk (sealed, so it still reads as evidence
and `slots compare` or `slots show --history` can judge it). Each fingerprint keeps its last
`HISTORY_KEPT` replaced sweeps; the name is the replaced sweep's date and its corpus, so the
listing reads in the order the sweeps were measured.
"""

from __future__ import annotations

import contextlib
import stat
import time
from pathlib import Path

import msgspec

from ...errors import EvidenceError
from ...files import atomic_write_bytes, ensure_private_dir, sha256_hex
from ...guarded import InputProblem, loads_json_bytes, read_regular_bytes
from ...state import StateLayout
from .store import load_evidence_bytes

HISTORY_FOLDER = "history"
HISTORY_KEPT = 10
_UNKNOWN_CORPUS = "unknown-corpus"


class SweepNamed(msgspec.Struct, frozen=True):
    """What a line needs to name an evidence file: when it was measured, what it decided, on
    which corpus; None for what the file does not say (a damaged file is kept all the same).

    usable: it passed the evidence checks (integrity, its own fingerprint) when summarised."""

    path: Path
    created_at: float | None
    ideal: int | None
    corpus_sha256: str | None
    complete: bool
    steps: int | None
    usable: bool


class PastSweep(SweepNamed, frozen=True):
    """A kept sweep as read (`summarise`), with the method it was measured by when it says."""

    method_hash: str | None = None

    def describe(self) -> str:
        """'the sweep of 2026-12-01 10:00 UTC (ideal 4, corpus 1a2b3c4d5e6f)'."""
        when = _date(self.created_at) if self.created_at is not None else "an unknown date"
        facts = [f"ideal {self.ideal}" if self.ideal is not None else "no decision"]
        facts.append(f"corpus {self.corpus_sha256[:12]}" if self.corpus_sha256 else "no corpus")
        if not self.complete:
            facts.append("paused")
        if not self.usable:
            facts.append("unusable")
        return f"the sweep of {when} ({', '.join(facts)})"

    def listed(self) -> ListedSweep:
        """The sweep as `show --history --json` lists it, with the line that describes it."""
        return ListedSweep(
            self.path, self.created_at, self.ideal, self.corpus_sha256, self.complete,
            self.steps, self.usable, self.describe(),
        )  # fmt: skip


class ListedSweep(SweepNamed, frozen=True):
    """A kept sweep in `slots show --history --json` (written by `as_json`), with the line
    that describes it."""

    described: str


def _date(epoch: float) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))
    except (OverflowError, OSError, ValueError):
        return f"epoch {epoch:.0f}"


def summarise(raw: bytes, path: Path) -> PastSweep:
    """The sweep that `raw` (the bytes of `path`) records, read as leniently as a listing
    needs: a file that is not evidence still gets a line, marked unusable."""
    try:
        evidence = load_evidence_bytes(raw, path)
    except EvidenceError:
        return _summarise_damaged(raw, path)
    document = evidence.document
    return PastSweep(
        path=path,
        created_at=document.created_at,
        ideal=document.decision.ideal if document.decision is not None else None,
        corpus_sha256=_text(document.corpus.get("sha256")),
        complete=document.complete,
        steps=len(document.steps),
        usable=document.recorded,
        method_hash=_text(document.method.get("hash")),
    )


def _summarise_damaged(raw: bytes, path: Path) -> PastSweep:
    try:
        data = loads_json_bytes(raw)
    except InputProblem:
        data = None
    data = data if isinstance(data, dict) else {}
    created = data.get("created_at")
    corpus = data.get("corpus")
    decision = data.get("decision")
    steps = data.get("steps")
    ideal = decision.get("ideal") if isinstance(decision, dict) else None
    return PastSweep(
        path=path,
        created_at=float(created) if isinstance(created, int | float) else None,
        ideal=ideal if isinstance(ideal, int) and not isinstance(ideal, bool) else None,
        corpus_sha256=_text(corpus.get("sha256")) if isinstance(corpus, dict) else None,
        complete=data.get("complete") is not False,
        steps=len(steps) if isinstance(steps, list) else None,
        usable=False,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def history_folder(layout: StateLayout, fingerprint: str) -> Path:
    """Where the replaced sweeps of `fingerprint` are kept (not created here)."""
    return layout.root / "evidence" / HISTORY_FOLDER / fingerprint


def keep_in_history(layout: StateLayout, fingerprint: str, raw: bytes, past: PastSweep) -> Path:
    """Copy `raw` (the evidence about to be replaced) into the history, atomically and
    private, then drop the oldest beyond `HISTORY_KEPT`. Returns the copy's path."""
    return keep_copy(layout, Path(fingerprint), raw, past.created_at, past.corpus_sha256)


def keep_copy(
    layout: StateLayout, part: Path, raw: bytes, created_at: float | None, corpus: str | None
) -> Path:
    """Copy `raw` into the history's `part` (a fingerprint's folder, or one inside it: a
    soak's at its N) as <date>-<corpus>.json, atomically and private, then drop the oldest
    beyond `HISTORY_KEPT`. Returns the copy's path."""
    folder = history_folder(layout, "")
    ensure_private_dir(folder.parent)
    ensure_private_dir(folder)
    for name in part.parts:
        folder = folder / name
        ensure_private_dir(folder)
    when = created_at if created_at is not None else time.time()
    try:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
    except (OverflowError, OSError, ValueError):
        stamp = "unknown-date"
    corpus = (corpus or _UNKNOWN_CORPUS)[:12]
    target = folder / f"{stamp}-{corpus}.json"
    if target.exists() and _bytes_of(target) != raw:
        # another record with the same date and corpus: both are kept, told apart by content
        target = folder / f"{stamp}-{corpus}-{sha256_hex(raw)[:8]}.json"
    atomic_write_bytes(target, raw)
    kept = sorted(path for path in folder.glob("*.json") if _is_regular(path))
    for old in kept[: max(0, len(kept) - HISTORY_KEPT)]:
        with contextlib.suppress(OSError):  # gone meanwhile: the history is bounded all the same
            old.unlink()
    return target


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _bytes_of(path: Path) -> bytes | None:
    try:
        return read_regular_bytes(path)
    except (OSError, InputProblem):
        return None


def list_history(layout: StateLayout, fingerprint: str) -> list[PastSweep]:
    """The replaced sweeps kept for `fingerprint`, newest first."""
    folder = history_folder(layout, fingerprint)
    if not folder.is_dir() or folder.is_symlink():
        return []
    sweeps = []
    for path in sorted(folder.glob("*.json"), reverse=True):
        raw = _bytes_of(path)
        sweeps.append(
            summarise(raw, path)
            if raw is not None
            else PastSweep(path, None, None, None, True, None, usable=False)
        )
    return sweeps


def fingerprints_with_history(layout: StateLayout) -> list[str]:
    """The fingerprints that have replaced sweeps kept."""
    folder = layout.root / "evidence" / HISTORY_FOLDER
    if not folder.is_dir() or folder.is_symlink():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.is_symlink())


__all__ = [
    "HISTORY_KEPT",
    "PastSweep",
    "fingerprints_with_history",
    "history_folder",
    "keep_copy",
    "keep_in_history",
    "list_history",
    "summarise",
]
