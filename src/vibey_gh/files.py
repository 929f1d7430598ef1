"""Canonical JSON, hashing and schema-checked reads, over atomic, private file writes.

The writes themselves (a temporary file in the same folder, fsync, rename over the target,
fsync of the folder; folders 0700, files 0600) are `platforms.atomic_files`', re-exported here:
the rest of the package writes its files through this module.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import EvidenceError, VibeyError
from .guarded import DEFAULT_LIMIT, InputProblem, loads_json, read_regular_text
from .platforms.storage.atomic_files import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    TEMP_PREFIX,
    append_line_durably,
    atomic_write_bytes,
    atomic_write_shared_bytes,
    atomic_write_shared_text,
    atomic_write_text,
    ensure_private_dir,
    leftover_temp_files,
    make_private_parents,
    utf8,
)


def canonical_json(data: object) -> str:
    """Sorted keys, no spaces: the form hashed for fingerprints and corpus digests."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def as_read_back(data: object) -> Any:
    """`data` as a JSON file of it reads back (tuples become lists, keys strings).

    A round trip of values this process holds, never of input, so the bounded reader is not
    needed: the seals of evidence and caches are computed on this form."""
    return json.loads(json.dumps(data, ensure_ascii=False))  # trusted-json: our own values


# The interpreter's own sha256 where it has one: hashlib loads OpenSSL first, several
# milliseconds of the `slots allowed` budget, to hash a few kilobytes. (Large files, such as a
# model's digest, use hashlib, which is faster per byte.)
_SHA256: Callable[[bytes], Any]
try:
    _SHA256 = __import__("_sha256").sha256
except (ImportError, AttributeError):
    from hashlib import sha256 as _SHA256


def sha256_hex(data: bytes) -> str:
    """The sha256 of `data`, as 64 hex digits."""
    return str(_SHA256(data).hexdigest())


def json_file_text(data: object) -> str:
    """`data` as this tool writes a JSON file."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def atomic_write_json(path: Path, data: object, mode: int = PRIVATE_FILE) -> None:
    atomic_write_text(path, json_file_text(data), mode)


def read_json(
    path: Path, *, kind: str, schema_version: int | None = None, limit: int = DEFAULT_LIMIT
) -> dict[str, object]:
    """Read a JSON object written by this tool; raise EvidenceError saying what is wrong.

    Only a regular file of at most `limit` bytes is read (see `guarded`)."""
    try:
        data = loads_json(read_regular_text(path, limit=limit))
    except FileNotFoundError:
        raise EvidenceError(f"{kind} file not found: {path}") from None
    except InputProblem as problem:
        raise EvidenceError(f"{kind} file {path} {problem}") from None
    if not isinstance(data, dict):
        raise EvidenceError(f"{kind} file {path} does not hold a JSON object")
    if schema_version is not None:
        found = data.get("schema_version")
        if found != schema_version:
            raise EvidenceError(
                f"{kind} file {path} has schema_version {found!r}; this tool reads {schema_version}"
            )
    return data


def remove_from_folder(
    folder: Path, names: list[str], expected: os.stat_result
) -> dict[str, str | None]:
    """`platforms.storage.removal.remove_from_folder`: removals relative to the folder that was
    checked, never through a link put in its place (OSError when it is not that folder)."""
    # lazy: `slots allowed` removes nothing
    from .platforms.storage.removal import remove_from_folder as remove

    return remove(folder, names, expected)


def warn(message: str) -> None:
    """One line on stderr for what went wrong beside the answer, never instead of it."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


def read_cache_text(path: Path, *, limit: int = DEFAULT_LIMIT) -> str | None:
    """The text of a derived file (a cache): None when there is none, and None with a warning
    when what is there cannot be read (a FIFO, a folder, a file it may not read, too large):
    a cache is skipped, never waited on (the read does not block) and never fatal."""
    try:
        return read_regular_text(path, limit=limit)
    except FileNotFoundError:
        return None
    except InputProblem as problem:
        warn(f"cache {path} {problem}; skipped")
    except OSError as exc:
        warn(f"cache {path} cannot be read ({exc.strerror or exc}); skipped")
    return None


def keep_cache_json(path: Path, data: object) -> bool:
    """Write a derived file atomically; a write refused (read-only or full disk, something
    that is not a regular file in its place) is a warning, and only costs the next call the
    work the cache saves. Something that is not a regular file in its place was already
    named when the cache was read (`read_cache_text`), so it is skipped without a second
    warning."""
    try:
        mode: int | None = path.lstat().st_mode
    except OSError:
        mode = None  # nothing there yet (or nothing to look at): the write says what goes wrong
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        return False
    try:
        atomic_write_json(path, data)
    except (OSError, VibeyError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        warn(f"cache {path} not written ({why.removeprefix(f'{path} ')}); skipped")
        return False
    return True


__all__ = [
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "TEMP_PREFIX",
    "append_line_durably",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_shared_bytes",
    "atomic_write_shared_text",
    "atomic_write_text",
    "canonical_json",
    "ensure_private_dir",
    "keep_cache_json",
    "leftover_temp_files",
    "make_private_parents",
    "read_cache_text",
    "read_json",
    "remove_from_folder",
    "sha256_hex",
    "utf8",
    "warn",
]
