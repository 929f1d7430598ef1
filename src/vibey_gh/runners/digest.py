"""The sha256 of a GGUF file, the model digest of llama.cpp runners (design §5, Fingerprint), and
of a llama-server binary whose version names no build (`builds.keyed_to_binary`).

Hashing a multi-gigabyte model takes seconds, and `slots allowed` must answer in milliseconds,
so digests are cached under the state root keyed by resolved path, size and mtime_ns: a file
that was replaced or touched gets hashed again. The cache is disposable; a damaged one is
rebuilt, never trusted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import RunnerNotFound
from ..files import keep_cache_json, read_cache_text
from ..guarded import MIB, loads_json
from ..state import StateLayout

CACHE_NAME = "gguf-digests.json"
CACHE_SCHEMA = 1
CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    import hashlib  # lazy: on a cache miss only; OpenSSL's sha256 is the fastest over gigabytes

    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _load_cache(path: Path) -> dict[str, Any]:
    # a FIFO or a device in its place must not hang `slots allowed` (see guarded): skipped
    text = read_cache_text(path, limit=MIB)
    try:
        data = loads_json(text) if text is not None else None
    except ValueError:
        return {}
    if not isinstance(data, dict) or data.get("schema_version") != CACHE_SCHEMA:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def gguf_digest(model: Path, state: StateLayout | None = None) -> str:
    """sha256 (hex) of the model file, from the cache when path, size and mtime_ns still match."""
    try:
        os.stat(model.expanduser().resolve())
    except OSError as exc:
        raise RunnerNotFound(f"model file not found: {model} ({exc.strerror})") from None
    return cached_sha256(model, state)


def cached_sha256(file: Path, state: StateLayout | None = None) -> str:
    """sha256 (hex) of `file` (symlinks followed), from the cache when its resolved path, size
    and mtime_ns still match; OSError when it cannot be read."""
    resolved = file.expanduser().resolve()
    stat = os.stat(resolved)
    layout = state or StateLayout.from_env()
    try:
        cache_path = layout.cache / CACHE_NAME
    except OSError:
        return sha256_file(resolved)
    entries = _load_cache(cache_path)
    key = str(resolved)
    entry = entries.get(key)
    if (
        isinstance(entry, dict)
        and entry.get("size") == stat.st_size
        and entry.get("mtime_ns") == stat.st_mtime_ns
        and isinstance(entry.get("sha256"), str)
    ):
        return str(entry["sha256"])
    digest = sha256_file(resolved)
    # Re-read just before writing so a digest another process cached meanwhile is kept.
    entries = _load_cache(cache_path)
    entries[key] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}
    # A cache that cannot be written only costs time on the next call.
    keep_cache_json(cache_path, {"schema_version": CACHE_SCHEMA, "entries": entries})
    return digest
