"""The evidence's nested sections, typed: device, corpus, method, bounds as recorded, runner,
the integrity seal, and each recorded verdict.

Each section is a TypedDict over the JSON object itself, with every key optional: an older
file holds fewer keys (the method before think time, a runner before its settings), and keys
this version does not name are kept as they are, so a document read and written again is the
same JSON, byte for byte after sealing. The TypedDict is the section's one declaration:
`read_*` checks every key it names against it (`interfaces.schema.checked`, so a damaged file
fails as one `MalformedJson` naming the key's path) and then hands back the object, now typed.

What these sections hold describes a sweep rather than decides it (the steps do that), so a
key with values of many shapes (a corpus profile, production's settings) is typed only as far
as its readers need.
"""

from __future__ import annotations

from typing import TypedDict, cast

from ...errors import MalformedJson
from ...interfaces import json_fields
from ...interfaces.bounds import Bounds, BoundsJson
from ...interfaces.schema import checked
from ...interfaces.think import ThinkJson
from ..judging.judge import VerdictJson


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
    interleave_seconds: float
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


def _read(data: object, key: str, schema: type[object]) -> dict[str, object]:
    """The object at `key` ({} when absent), kept as written, each key `schema` declares
    checked against its declaration (a null passes: older writers left an unset key so)."""
    section = json_fields.mapping(data, key)
    with json_fields.within(key):
        checked({k: v for k, v in section.items() if v is not None}, schema)
    return section


def read_device(data: object) -> DeviceSection:
    return cast(DeviceSection, _read(data, "device", DeviceSection))


def read_corpus(data: object) -> CorpusSection:
    return cast(CorpusSection, _read(data, "corpus", CorpusSection))


def read_method(data: object) -> MethodSection:
    return cast(MethodSection, _read(data, "method", MethodSection))


def read_bounds(data: object, schema: type[Bounds] = Bounds) -> BoundsJson:
    """The bounds as recorded, kept as written; each key `schema` declares checked."""
    return _read(data, "bounds", schema)


def read_runner(data: object) -> RunnerSection:
    return cast(RunnerSection, _read(data, "runner", RunnerSection))


def read_integrity(data: object, key: str) -> IntegritySeal:
    return cast(IntegritySeal, _read(data, key, IntegritySeal))


def read_verdict(value: object) -> VerdictJson:
    """One recorded verdict (an item of `verdicts`), kept as written."""
    if not isinstance(value, dict):
        raise MalformedJson(f"expected an object, got {value!r:.40}")
    checked({k: v for k, v in value.items() if v is not None}, VerdictJson)
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
