"""The fingerprint: what evidence is keyed to (design §5).

sha256 over the canonical JSON of the device (hardware model, processor, memory, accelerators,
OS name and version), the runner (kind and version), the model digest, the window and
production's own runner settings (llama-server's runner_args, Ollama's OLLAMA_* variables); the
first 16 hex digits are the id. The settings are hashed only when there are any, so a setup
without them keeps the id it had before settings were part of the fingerprint. Canonical JSON
(sorted keys, no spaces, UTF-8) makes the id the same on every Python and every machine that
sees the same facts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from ...files import canonical_json, sha256_hex
from ...interfaces.identity import DeviceFacts, RunnerInfo

FINGERPRINT_FIELDS = (
    "hardware_model",
    "processor",
    "memory_bytes",
    "accelerators",
    "os_name",
    "os_version",
    "runner_kind",
    "runner_version",
    "model_digest",
    "window",
)
SETTINGS_FIELD = "runner_settings"
ID_LENGTH = 16
DIGEST_SHOWN = 12
GIB = 1 << 30


class Fingerprint(msgspec.Struct, frozen=True):
    """`id`: 16 hex digits; `fields`: exactly what was hashed (JSON-ready)."""

    id: str
    fields: dict[str, object]


class MeasuredOn(msgspec.Struct, frozen=True):
    """The machine and runner a sweep was measured on, read once from its fingerprint fields:
    what the summary's, the report's and the plots' opening words say. A field the file does
    not hold is None (said as "None", as the reports always have)."""

    hardware_model: str | None
    processor: str | None
    os_name: str | None
    os_version: str | None
    runner_kind: str | None
    runner_version: str | None
    model_digest: str | None
    window: int | None
    accelerators: tuple[object, ...]

    @property
    def os(self) -> str:
        return f"{self.os_name} {self.os_version}"

    @property
    def runner(self) -> str:
        return f"{self.runner_kind} {self.runner_version}"


def measured_on(fields: Mapping[str, object]) -> MeasuredOn:
    """The one reader of the fingerprint fields for people: each by its name, typed."""

    def text(name: str) -> str | None:
        value = fields.get(name)
        # fields are hashed as recorded: show an odd value as written rather than hide it
        return None if value is None else value if isinstance(value, str) else str(value)

    window = fields.get("window")
    accelerators = fields.get("accelerators")
    return MeasuredOn(
        hardware_model=text("hardware_model"),
        processor=text("processor"),
        os_name=text("os_name"),
        os_version=text("os_version"),
        runner_kind=text("runner_kind"),
        runner_version=text("runner_version"),
        model_digest=text("model_digest"),
        window=window if isinstance(window, int) and not isinstance(window, bool) else None,
        accelerators=tuple(accelerators) if isinstance(accelerators, list) else (),
    )


def fingerprint_fields(device: DeviceFacts, runner: RunnerInfo, window: int) -> dict[str, object]:
    """The hashed fields. Accelerators keep the probe's order (by index); the runner's
    settings are a field only when there are any."""
    fields: dict[str, object] = {
        "hardware_model": device.hardware_model,
        "processor": device.processor,
        "memory_bytes": device.memory_bytes,
        "accelerators": [
            {"name": gpu.name, "memory_bytes": gpu.memory_bytes} for gpu in device.accelerators
        ],
        "os_name": device.os_name,
        "os_version": device.os_version,
        "runner_kind": runner.kind,
        "runner_version": runner.version,
        "model_digest": runner.model_digest,
        "window": window,
    }
    if runner.settings:
        fields[SETTINGS_FIELD] = dict(sorted(runner.settings.items()))
    return fields


def fingerprint_id(fields: dict[str, object]) -> str:
    """The id of already-assembled fields (evidence files keep their fields; this re-checks)."""
    chosen = {name: fields.get(name) for name in FINGERPRINT_FIELDS}
    settings = fields.get(SETTINGS_FIELD)
    if settings:
        chosen[SETTINGS_FIELD] = settings
    digest = sha256_hex(canonical_json(chosen).encode("utf-8"))
    return digest[:ID_LENGTH]


def compute_fingerprint(device: DeviceFacts, runner: RunnerInfo, window: int) -> Fingerprint:
    fields = fingerprint_fields(device, runner, window)
    return Fingerprint(fingerprint_id(fields), fields)


# ---------------------------------------------------------------------------------------------
# What changed, in words
# ---------------------------------------------------------------------------------------------


def _shown(value: object) -> str:
    return "unknown" if value is None or value == "" else str(value)


def _memory(value: object) -> str:
    return f"{value / GIB:.1f} GiB" if isinstance(value, int | float) else "unknown"


def _digest(value: object) -> str:
    if not value:
        return "unknown"
    text = str(value).removeprefix("sha256:").removeprefix("sha256-")
    return text[:DIGEST_SHOWN]


def _accelerators(value: object) -> str:
    if not value:
        return "none"
    if not isinstance(value, list):
        return _shown(value)
    parts = []
    for gpu in value:
        if not isinstance(gpu, dict):
            parts.append(str(gpu))
            continue
        memory = gpu.get("memory_bytes")
        name = _shown(gpu.get("name"))
        parts.append(f"{name} ({_memory(memory)})" if memory is not None else name)
    return ", ".join(parts)


# (label, field, how to show it) for fields that are described on their own
_SIMPLE: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("hardware", "hardware_model", _shown),
    ("processor", "processor", _shown),
    ("memory", "memory_bytes", _memory),
    ("accelerators", "accelerators", _accelerators),
)
_TAIL: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("model digest", "model_digest", _digest),
    ("window", "window", _shown),
)
# (label, name field, version field): a version change alone shows just the versions
_NAMED_VERSIONS = (("os", "os_name", "os_version"), ("runner", "runner_kind", "runner_version"))


def describe_differences(old_fields: dict[str, object], new_fields: dict[str, object]) -> list[str]:
    """What differs between two fingerprints' fields, as short phrases, in field order:
    "runner 0.34.2 → 0.34.4", "window 32768 → 65536", "memory 24.0 GiB → 32.0 GiB"."""
    old, new = old_fields.get, new_fields.get
    phrases: list[str] = []
    for label, name, show in _SIMPLE:
        if old(name) != new(name):
            phrases.append(f"{label} {show(old(name))} → {show(new(name))}")
    for label, name, version in _NAMED_VERSIONS:
        if old(name) != new(name):
            before = _named_version(old(name), old(version))
            after = _named_version(new(name), new(version))
            phrases.append(f"{label} {before} → {after}")
        elif old(version) != new(version):
            phrases.append(f"{label} {_shown(old(version))} → {_shown(new(version))}")
    for label, name, show in _TAIL:
        if old(name) != new(name):
            phrases.append(f"{label} {show(old(name))} → {show(new(name))}")
    phrases.extend(_settings_differences(old(SETTINGS_FIELD), new(SETTINGS_FIELD)))
    return phrases


def _named_version(name: object, version: object) -> str:
    """ "embedded xllamacpp 2026.10" — a version that already starts with its name
    ("simulated 0.1.0") is not named twice."""
    shown_name, shown_version = _shown(name), _shown(version)
    if shown_version.split(" ", 1)[0] == shown_name:
        return shown_version
    return f"{shown_name} {shown_version}"


def _settings_differences(old: object, new: object) -> list[str]:
    """ "runner setting OLLAMA_KV_CACHE_TYPE q8_0 → unset", one per setting that changed."""
    before = old if isinstance(old, dict) else {}
    after = new if isinstance(new, dict) else {}
    phrases = []
    for name in sorted(set(before) | set(after)):
        if before.get(name) != after.get(name):
            was, now = before.get(name, "unset"), after.get(name, "unset")
            phrases.append(f"runner setting {name} {was!s} → {now!s}")
    return phrases
