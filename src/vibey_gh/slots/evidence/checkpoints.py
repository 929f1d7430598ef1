"""Checkpoints: the completed steps of a sweep in progress, so an interrupted sweep resumes.

progress/<fp>-<corpus>-<method>.json holds {schema_version, kind, key, steps, method}: the key
says which sweep the steps belong to (fingerprint, corpus, the hash of how a step is measured);
a file with another key is another sweep's and is never resumed from. `method` (absent from
files written before it was kept) is what the hash was taken of, so a rerun measured another
way can name the options that changed (`slots.measurement.resume`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

import msgspec

from ...errors import EvidenceError, MalformedJson, Refused
from ...files import atomic_write_json, read_json, remove_from_folder
from ...guarded import kind_of
from ...interfaces import json_fields
from ...interfaces.schema import as_json, checked
from ...state import StateLayout
from ..judging.records import StepRecord

PROGRESS_SCHEMA = 1
PROGRESS_KIND: Final = "vibey-gh-progress"


class ProgressDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One checkpoint file: the sweep's key and the steps it has completed, declared in the
    order it is written (`method` left out when not kept, as in files older than it; the
    schema version and kind have no default, so they are always written)."""

    schema_version: int
    kind: Literal["vibey-gh-progress"]
    key: dict[str, object]
    steps: tuple[StepRecord, ...]
    method: dict[str, object] | None = None


def read_progress_document(data: object) -> ProgressDocument:
    """Raises MalformedJson naming the bad field's path, from `progress`."""
    with json_fields.within("progress"):
        return checked(data, ProgressDocument)


def progress_path(layout: StateLayout, fingerprint: str, corpus_sha: str, method: str) -> Path:
    return layout.progress / f"{fingerprint}-{corpus_sha[:12]}-{method}.json"


def save_progress(
    path: Path,
    key: Mapping[str, object],
    steps: Sequence[StepRecord],
    method: Mapping[str, object] | None = None,
) -> None:
    document = ProgressDocument(
        schema_version=PROGRESS_SCHEMA,
        kind=PROGRESS_KIND,
        key=dict(key),
        steps=tuple(steps),
        method=None if method is None else dict(method),
    )
    atomic_write_json(path, as_json(document))


def read_progress(path: Path) -> ProgressDocument:
    """A checkpoint file; EvidenceError (MalformedJson naming the field) when unusable."""
    data = read_json(path, kind="progress", schema_version=PROGRESS_SCHEMA)
    return read_progress_document(data)


def load_progress(path: Path, key: Mapping[str, object]) -> list[StepRecord]:
    """Completed steps of an interrupted sweep with this key; [] when there is none."""
    if not path.exists():
        return []
    data = read_json(path, kind="progress", schema_version=PROGRESS_SCHEMA)
    if data.get("key") != dict(key):
        raise EvidenceError(f"progress file {path} belongs to another sweep; remove it to restart")
    try:
        return list(read_progress_document(data).steps)
    except MalformedJson as exc:
        raise EvidenceError(f"progress file {path} is malformed ({exc}); remove it") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EvidenceError(f"progress file {path} is malformed ({exc}); remove it") from None


class CheckpointFile(msgspec.Struct, frozen=True):
    """One checkpoint on disk as `doctor` lists it: whose it is, how much it holds, and why it
    cannot be read (`problem`) when it cannot."""

    path: Path
    fingerprint: str | None
    steps: int
    size_bytes: int
    modified: float
    problem: str | None = None


def list_checkpoints(folder: Path) -> list[CheckpointFile]:
    """Every checkpoint file in `folder` (the state's progress folder), oldest first."""
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*.json"):
        try:
            stat = path.stat()
        except OSError:
            continue  # removed meanwhile
        fingerprint, steps, problem = None, 0, None
        try:
            document = read_progress(path)
            fingerprint = str(document.key.get("fingerprint") or "") or None
            steps = len(document.steps)
        except EvidenceError as exc:
            problem = str(exc)
        found.append(CheckpointFile(path, fingerprint, steps, stat.st_size, stat.st_mtime, problem))
    return sorted(found, key=lambda c: (c.modified, c.path.name))


class LeftAsIs(msgspec.Struct, frozen=True):
    """A file in the progress folder `forget_checkpoints` left as it was, and why."""

    path: Path
    why: str


class Forgotten(msgspec.Struct, frozen=True):
    """What `forget_checkpoints` did: the checkpoints removed, and every other file in the
    progress folder left as it was, with why."""

    removed: tuple[CheckpointFile, ...]
    left: tuple[LeftAsIs, ...]

    def lines(self) -> list[str]:
        """What `slots forget` prints: each removed, or that none was, then each left."""
        removed = [f"removed {c.path} ({c.steps} step(s))" for c in self.removed]
        return (removed or ["no checkpoint to remove"]) + [
            f"left {left.path}: {left.why}" for left in self.left
        ]


def forget_checkpoints(layout: StateLayout, fingerprint: str | None = None) -> Forgotten:
    """Remove the checkpoints in the state's progress folder (of `fingerprint` only, when
    given). Only a regular file that reads back as a checkpoint of ours (our kind, our schema,
    a key and steps) is removed; anything else there is left and named. Refused (nothing
    removed) when the progress folder is a link, or anything but a folder of the state's own."""
    folder = layout.root / "progress"
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return Forgotten((), ())
    if stat.S_ISLNK(info.st_mode):
        raise Refused(
            f"{folder} is a link (to {os.readlink(folder)}), not the state's own folder: "
            "nothing removed (checkpoints are removed only inside the state folder)"
        )
    if not stat.S_ISDIR(info.st_mode):
        raise Refused(f"{folder} is not a folder: nothing removed")
    chosen: dict[str, CheckpointFile] = {}
    left: list[LeftAsIs] = []
    for path in sorted(folder.iterdir()):
        if path.suffix != ".json":
            continue
        why = _not_a_checkpoint(path)
        if why is not None:
            left.append(LeftAsIs(path, why))
            continue
        document = read_progress(path)
        owner = str(document.key.get("fingerprint") or "") or None
        if fingerprint is not None and owner != fingerprint:
            continue
        stat_now = path.stat()
        chosen[path.name] = CheckpointFile(
            path, owner, len(document.steps), stat_now.st_size, stat_now.st_mtime
        )
    try:
        outcome = remove_from_folder(folder, list(chosen), info)
    except OSError as exc:  # not the folder that was checked (a link, or another in its place)
        raise Refused(f"{exc.strerror or exc}: nothing removed") from None
    removed = [chosen[name] for name, problem in outcome.items() if problem is None]
    left += [LeftAsIs(chosen[name].path, why) for name, why in outcome.items() if why is not None]
    return Forgotten(tuple(removed), tuple(left))


def _not_a_checkpoint(path: Path) -> str | None:
    """Why the file at `path` is not a checkpoint of ours, or None when it is one."""
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return "a link, not a checkpoint file"
    if not stat.S_ISREG(mode):
        return f"{kind_of(mode)}, not a checkpoint file"
    try:
        data = read_json(path, kind="progress", schema_version=PROGRESS_SCHEMA)
        if data.get("kind") != PROGRESS_KIND:
            return f"not a checkpoint (its kind is {data.get('kind')!r:.40})"
        read_progress_document(data)
    except EvidenceError as exc:
        return f"not a checkpoint of ours ({exc})"
    return None


__all__ = [
    "PROGRESS_KIND",
    "PROGRESS_SCHEMA",
    "CheckpointFile",
    "Forgotten",
    "LeftAsIs",
    "forget_checkpoints",
    "ProgressDocument",
    "list_checkpoints",
    "load_progress",
    "progress_path",
    "read_progress",
    "save_progress",
]
