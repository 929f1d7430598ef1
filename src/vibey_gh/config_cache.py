"""The config file's parsed TOML, kept in the state's cache so a call skips the TOML parser.

`slots allowed` reads the config on every call, and loading `tomllib` (with the `datetime` and
`string` it imports) is a tenth of that call's budget. So the last parse of each config file is
kept in `cache/config-toml/` (one file per config location) beside the sha256 of the exact text
it was parsed from. A call whose
config text has that digest takes the parse from there; any other text, a cache that is
missing, damaged, too large or holds anything but JSON's own types is parsed afresh and the
cache rewritten. What the cache holds is only what `tomllib` returned: the config's checks
(`parse_config`) run on it exactly as on a fresh parse, so a cache edited by hand can say no
more than an edited config file could.

The cache is written only where the state's `cache/` folder already exists (a calibration
makes it): a declared config never creates the state folder, and a cache that cannot be
written (read-only state) is simply not kept. A config holding TOML's dates or times, which
JSON cannot carry, is never cached.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .files import sha256_hex, utf8
from .guarded import MAX_DEPTH, MIB, InputProblem, loads_json, nesting_depth, read_regular_text

CACHE_FOLDER = "config-toml"
CACHE_LIMIT = 2 * MIB
CACHE_SCHEMA = 1


class NotToml(ValueError):
    """The text is not valid TOML; the message is tomllib's."""


def cache_file_for(config_path: Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where the parse of the config file at `config_path` is kept: one file per config
    location, so two configs read in turn (a project's and the user's) do not evict each
    other."""
    from .state import state_root  # where the state lives, only once a config file is read

    root = state_root(os.environ if environ is None else environ)
    name = sha256_hex(utf8(str(config_path.absolute())))[:16]
    return root / "cache" / CACHE_FOLDER / f"{name}.json"


def parsed_config_toml(
    text: str, config_path: Path, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """`loads_toml(text)`, from the cache when it holds this exact text's parse.

    Raises NotToml for a syntax error (so a caller need not load tomllib to catch it) and
    InputProblem for nesting beyond MAX_DEPTH."""
    cache_file = cache_file_for(config_path, environ)
    digest = sha256_hex(utf8(text))
    kept = _kept_parse(cache_file, digest)
    if kept is not None:
        return kept
    import tomllib  # only for a text not parsed before

    from .guarded import loads_toml

    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise NotToml(str(exc)) from None
    _keep(cache_file, digest, data)
    return data


def _kept_parse(cache_file: Path, digest: str) -> dict[str, Any] | None:
    try:
        kept = loads_json(read_regular_text(cache_file, limit=CACHE_LIMIT))
    except (OSError, InputProblem):
        return None
    if not isinstance(kept, dict) or kept.get("schema") != CACHE_SCHEMA:
        return None
    data = kept.get("toml")
    if kept.get("text_sha256") != digest or not isinstance(data, dict):
        return None
    if not _only_json_types(data) or nesting_depth(data) > MAX_DEPTH:
        return None
    return data


def _keep(cache_file: Path, digest: str, data: dict[str, Any]) -> None:
    if not cache_file.parent.parent.is_dir() or not _only_json_types(data):
        return
    from .files import atomic_write_json, ensure_private_dir

    # a cache that cannot be kept only costs the next call the parse
    with contextlib.suppress(OSError, ValueError):
        ensure_private_dir(cache_file.parent)
        atomic_write_json(cache_file, {"schema": CACHE_SCHEMA, "text_sha256": digest, "toml": data})


def _only_json_types(value: Any) -> bool:
    """Strings, finite numbers, booleans, lists and string-keyed tables only (no TOML dates)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _only_json_types(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_only_json_types(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int)  # bool is an int
