"""The config file's parsed TOML, kept in the state's cache so a call skips the TOML parser.

`slots allowed` reads the config on every call, and loading `tomllib` (with the `datetime` and
`string` it imports) costs 40-60 ms of a loaded machine's 100 ms budget. So the last parse of
each config file is kept in `cache/config-toml/` (one file per config location), keyed to the
sha256 of the config file's exact bytes (never its size or time: an edit that keeps both is
still another text) and sealed: the cache carries the sha256 of its own content (schema, key
and parse), checked on every read. A call whose config bytes have that key, from a cache whose
seal holds, takes the parse from there; any other bytes, a cache that is missing, damaged,
edited (its seal does not match), too large or holds anything but JSON's own types is parsed
afresh from the config file and the cache rewritten. So a cache edited by hand can never make
the tool obey what the config file does not say; and what the cache holds is only what
`tomllib` returned: the config's checks (`parse_config`) run on it exactly as on a fresh parse.
Like the evidence's digest, the seal stops mistakes and careless edits, not someone who sets
out to recompute it (who could as well edit the config file).

The cache is written only where the state's `cache/` folder already exists (a calibration
makes it): a declared config never creates the state folder. A cache that cannot be read or
written (a FIFO or a folder in its place, a read-only state) is skipped with a warning on
stderr: it only costs the parse. A config holding TOML's dates or times, which JSON cannot
carry, is never cached.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .files import (
    canonical_json,
    ensure_private_dir,
    keep_cache_json,
    read_cache_text,
    sha256_hex,
    utf8,
)
from .guarded import MAX_DEPTH, MIB, InputProblem, loads_json, loads_toml, nesting_depth
from .state import state_root

CACHE_FOLDER = "config-toml"
CACHE_LIMIT = 2 * MIB
# 2: sealed, and keyed to the bytes of the file (1 was keyed to its text, unsealed)
CACHE_SCHEMA = 2
SEAL_KEY = "seal"


class NotToml(ValueError):
    """The text is not valid TOML; the message is tomllib's."""


def cache_file_for(config_path: Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where the parse of the config file at `config_path` is kept: one file per config
    location, so two configs read in turn (a project's and the user's) do not evict each
    other."""
    root = state_root(os.environ if environ is None else environ)
    name = sha256_hex(utf8(str(config_path.absolute())))[:16]
    return root / "cache" / CACHE_FOLDER / f"{name}.json"


def parsed_config_toml(
    raw: bytes, config_path: Path, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The TOML parse of the config file's bytes `raw`, from the cache when it holds the
    parse of exactly these bytes and its seal holds.

    Raises NotToml for a syntax error (so a caller need not load tomllib to catch it) and
    InputProblem for text that is not UTF-8 or nesting beyond MAX_DEPTH."""
    cache_file = cache_file_for(config_path, environ)
    digest = sha256_hex(raw)
    kept = _kept_parse(cache_file, digest)
    if kept is not None:
        return kept
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputProblem("is not UTF-8 text") from None
    try:
        data = loads_toml(text)
    except InputProblem:
        raise
    except ValueError as exc:  # tomllib's TOMLDecodeError, imported by loads_toml alone
        raise NotToml(str(exc)) from None
    _keep(cache_file, digest, data)
    return data


def _seal(body: Mapping[str, object]) -> str:
    return sha256_hex(utf8(canonical_json(dict(body))))


def _kept_parse(cache_file: Path, digest: str) -> dict[str, Any] | None:
    text = read_cache_text(cache_file, limit=CACHE_LIMIT)
    if text is None:
        return None
    try:
        kept = loads_json(text)
    except InputProblem:
        return None
    if not isinstance(kept, dict) or kept.get("schema") != CACHE_SCHEMA:
        return None
    body = {name: value for name, value in kept.items() if name != SEAL_KEY}
    data = body.get("toml")
    if body.get("config_sha256") != digest or not isinstance(data, dict):
        return None
    if set(body) != {"schema", "config_sha256", "toml"} or kept.get(SEAL_KEY) != _seal(body):
        return None  # edited after it was written: parse the file itself
    if not _only_json_types(data) or nesting_depth(data) > MAX_DEPTH:
        return None
    return data


def _keep(cache_file: Path, digest: str, data: dict[str, Any]) -> None:
    if not cache_file.parent.parent.is_dir() or not _only_json_types(data):
        return

    body = {"schema": CACHE_SCHEMA, "config_sha256": digest, "toml": data}
    with contextlib.suppress(OSError):  # the write below says why
        ensure_private_dir(cache_file.parent)
    keep_cache_json(cache_file, {**body, SEAL_KEY: _seal(body)})


def _only_json_types(value: Any) -> bool:
    """Strings, finite numbers, booleans, lists and string-keyed tables only (no TOML dates)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _only_json_types(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_only_json_types(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int)  # bool is an int
