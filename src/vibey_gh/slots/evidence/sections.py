"""The evidence's nested sections, typed: device, corpus, method, bounds as recorded, runner,
the integrity seal, and each recorded verdict.

Each section is a TypedDict over the JSON object itself, with every key optional: an older
file holds fewer keys (the method before think time, a runner before its settings), and keys
this version does not name are kept as they are, so a document read and written again is the
same JSON, byte for byte after sealing. `read_*` is the one reader of each section: it checks
the type of every key it names (through `interfaces.json_fields`, so a damaged file fails as
one `MalformedJson` naming the key's path) and then hands back the object, now typed.

What these sections hold describes a sweep rather than decides it (the steps do that), so a
key with values of many shapes (a corpus profile, production's settings) is typed only as far
as its readers need.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypedDict, cast

from ...errors import MalformedJson
from ...interfaces import json_fields
from ...interfaces.bounds import Bounds, BoundsJson
from ...interfaces.schema import checked
from ...interfaces.think import ThinkJson
from ..judging.judge import VerdictJson

# A key's reader: checks the JSON type of `data[key]` (absent or null pass), raises MalformedJson.
KeyReaders = Mapping[str, Callable[[object, str], object]]


class DeviceSection(TypedDict, total=False):
    """Where each fingerprint field came from, which could not be read and why, and the
    cgroup's memory limit (None: no limit)."""

    sources: dict[str, str]
    missing: dict[str, str]
    memory_limit_bytes: int | None


class CorpusSection(TypedDict, total=False):
    sha256: str
    shape: str
    pool_sha256: str | None
    window: int
    segments: int
    turns: int
    strata: list[dict[str, object]]  # each stratum as `Stratum.to_json` wrote it
    depth_estimates: dict[str, int]
    profile: dict[str, object]


class StepMethod(TypedDict, total=False):
    """How each step was measured (absent in evidence of the one-pass method)."""

    kind: str
    interval: str
    min_seconds: float
    max_seconds: float
    gain_interval: str
    one_slot_until: str
    best_until: str


class MethodSection(TypedDict, total=False):
    """How the sweep measured; its `hash` keys checkpoints (`store.method_hash`)."""

    runner: str
    model: str
    window: int
    max_tokens: int
    temperature: float
    seed: int
    slots: list[int] | str
    max_slots: int | None
    segment_order: str
    turns: str
    steps: StepMethod
    think: ThinkJson
    split_window: bool
    runs_interval: str
    hash: str


class RunnerSection(TypedDict, total=False):
    kind: str
    model: str | None
    digest: str | None
    settings: dict[str, str]
    settings_source: str | None


class IntegritySeal(TypedDict, total=False):
    algorithm: str
    digest: str


def _text(data: object, key: str) -> object:
    return json_fields.text(data, key, None)


def _integer(data: object, key: str) -> object:
    return json_fields.integer(data, key, None)


def _number(data: object, key: str) -> object:
    return json_fields.number(data, key, None)


def _flag(data: object, key: str) -> object:
    return json_fields.boolean(data, key, None)


def _object(data: object, key: str) -> object:
    return json_fields.mapping(data, key)


def _list(data: object, key: str) -> object:
    return json_fields.items(data, key)


def _texts(data: object, key: str) -> object:
    """An object of strings (a field's source, why one is missing, settings)."""
    for name, value in json_fields.mapping(data, key).items():
        if not isinstance(value, str):
            raise MalformedJson(f"expected a string, got {value!r:.40}", (key, name))
    return None


def _slots(data: object, key: str) -> object:
    """An explicit list of slot counts, or the words of the default order."""
    if isinstance(data, dict) and isinstance(data.get(key), str):
        return None
    for index, value in enumerate(json_fields.items(data, key)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MalformedJson(f"expected a whole number, got {value!r:.40}", (key, index))
    return None


_DEVICE: KeyReaders = {"sources": _texts, "missing": _texts, "memory_limit_bytes": _integer}
_CORPUS: KeyReaders = {
    "sha256": _text,
    "shape": _text,
    "pool_sha256": _text,
    "window": _integer,
    "segments": _integer,
    "turns": _integer,
    "strata": _list,
    "depth_estimates": _object,
    "profile": _object,
}
_METHOD: KeyReaders = {
    "runner": _text,
    "model": _text,
    "window": _integer,
    "max_tokens": _integer,
    "temperature": _number,
    "seed": _integer,
    "slots": _slots,
    "max_slots": _integer,
    "segment_order": _text,
    "turns": _text,
    "steps": _object,
    "think": _object,
    "split_window": _flag,
    "runs_interval": _text,
    "hash": _text,
}
_RUNNER: KeyReaders = {
    "kind": _text,
    "model": _text,
    "digest": _text,
    "settings": _texts,
    "settings_source": _text,
}
_INTEGRITY: KeyReaders = {"algorithm": _text, "digest": _text}
_VERDICT: KeyReaders = {"index": _integer, "slots": _integer, "label": _text, "broken": _list}


def _read(data: object, key: str, keys: KeyReaders) -> object:
    """The object at `key` ({} when absent), each named key of the right JSON type."""
    section = json_fields.mapping(data, key)
    with json_fields.within(key):
        for name, read in keys.items():
            read(section, name)
    return section


def read_device(data: object) -> DeviceSection:
    return cast(DeviceSection, _read(data, "device", _DEVICE))


def read_corpus(data: object) -> CorpusSection:
    return cast(CorpusSection, _read(data, "corpus", _CORPUS))


def read_method(data: object) -> MethodSection:
    return cast(MethodSection, _read(data, "method", _METHOD))


def read_bounds(data: object, schema: type[Bounds] = Bounds) -> BoundsJson:
    """The bounds as recorded, kept as written; each key `schema` declares is checked against
    its declaration (a null passes: an older writer left an unset bound so)."""
    section = json_fields.mapping(data, "bounds")
    with json_fields.within("bounds"):
        checked({k: v for k, v in section.items() if v is not None}, schema)
    return section


def read_runner(data: object) -> RunnerSection:
    return cast(RunnerSection, _read(data, "runner", _RUNNER))


def read_integrity(data: object, key: str) -> IntegritySeal:
    return cast(IntegritySeal, _read(data, key, _INTEGRITY))


def read_verdict(value: object) -> VerdictJson:
    """One recorded verdict (an item of `verdicts`)."""
    if not isinstance(value, dict):
        raise MalformedJson(f"expected an object, got {value!r:.40}")
    for name, read in _VERDICT.items():
        read(value, name)
    return cast(VerdictJson, value)


__all__ = [
    "CorpusSection",
    "DeviceSection",
    "IntegritySeal",
    "MethodSection",
    "RunnerSection",
    "read_bounds",
    "read_corpus",
    "read_device",
    "read_integrity",
    "read_method",
    "read_runner",
    "read_verdict",
]
