"""What `vibey-gh doctor` reports: every device fact and where it came from (or why it is
missing), memory now, the production runner's identity and settings, the fingerprint evidence
is keyed to, and where production differs from the config: gathered, and said in lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import structs

from .config import CONFIG_ENV, CONFIG_NAME, LocalModels
from .errors import VibeyError
from .interfaces.slots_interface import DeviceFacts, MemorySample, RunnerInfo
from .platforms.device.readings import SwapSpace, format_gib
from .slots.evidence.fingerprint import Fingerprint, compute_fingerprint
from .userdirs import user_config_dir

if TYPE_CHECKING:
    from .platforms.device.probes import PlatformProbes

DEVICE_ROWS = (
    ("hardware model", "hardware_model"),
    ("processor", "processor"),
    ("memory", "memory_bytes"),
    ("memory limit", "memory_limit_bytes"),
    ("accelerators", "accelerators"),
    ("os name", "os_name"),
    ("os version", "os_version"),
)


class DoctorReport(msgspec.Struct, frozen=True):
    """Everything doctor found. `runner` is None when identification failed (`runner_error`);
    the fingerprint then cannot be computed and `fingerprint_missing` says why."""

    platform: str
    config: LocalModels
    device: DeviceFacts
    memory: MemorySample
    swap: SwapSpace
    runner: RunnerInfo | None
    runner_error: str | None
    fingerprint: Fingerprint | None
    fingerprint_missing: str | None
    drift: tuple[str, ...] = ()

    def output(self) -> DoctorOutput:
        """What doctor found as `--json` answers it: each device field with where it came
        from, the memory now, the swap, the runner and the fingerprint."""
        device = self.device
        memory, swap = self.memory, self.swap
        return DoctorOutput(
            self.platform,
            self.config.source,
            {
                name: DeviceField(
                    getattr(device, name), device.sources.get(name), device.missing.get(name)
                )
                for _, name in DEVICE_ROWS
            },
            # the sample but its monotonic clock, which means nothing outside this process
            {name: value for name, value in structs.asdict(memory).items() if name != "t"},
            SwapShown(swap.total_bytes, swap.used_bytes, swap.source, swap.reason),
            self.runner,
            self.drift,
            self.runner_error,
            self.config.production,
            self.config.window,
            self.fingerprint,
            self.fingerprint_missing,
        )


class DeviceField(msgspec.Struct, frozen=True):
    value: object
    source: str | None
    missing: str | None  # why there is no value


class SwapShown(msgspec.Struct, frozen=True):
    total_bytes: int | None
    used_bytes: int | None
    source: str | None
    missing: str | None


class DoctorOutput(msgspec.Struct, frozen=True):
    """`vibey-gh doctor --json` (written by `as_json`)."""

    platform: str
    config: Path | None  # the config file read, None for none
    device: dict[str, DeviceField]
    memory_now: dict[str, object]  # a `MemorySample` but its clock
    swap: SwapShown
    runner: RunnerInfo | None
    differs_from_config: tuple[str, ...]
    runner_error: str | None
    production_url: str
    window: int
    fingerprint: Fingerprint | None
    fingerprint_missing: str | None


def gather(
    config: LocalModels,
    probes: PlatformProbes,
    identify: Callable[[LocalModels], RunnerInfo],
    drift: Callable[[LocalModels], list[str]] | None = None,
) -> DoctorReport:
    """Probe the device, read memory once, identify the production runner, fingerprint, and
    compare what production shows of its settings with the config."""
    device = probes.device.describe()
    memory = probes.memory.sample()
    swap = probes.memory.swap_space()
    runner: RunnerInfo | None = None
    runner_error: str | None = None
    try:
        runner = identify(config)
    except (VibeyError, OSError) as exc:
        runner_error = str(exc) or type(exc).__name__
    fingerprint = compute_fingerprint(device, runner, config.window) if runner else None
    missing = None
    if runner is None:
        missing = f"the production runner could not be identified: {runner_error}"
    differences = tuple(drift(config)) if drift is not None and runner is not None else ()
    return DoctorReport(
        probes.platform,
        config,
        device,
        memory,
        swap,
        runner,
        runner_error,
        fingerprint,
        missing,
        differences,
    )


def config_in_use(config: LocalModels) -> str:
    """The file the settings came from, or where one would be looked for."""
    if config.source is not None:
        return str(config.source)
    return (
        f"none found, defaults in use (looked for --config / ${CONFIG_ENV}, ./{CONFIG_NAME}, "
        f"then {user_config_dir() / CONFIG_NAME})"
    )


LABEL_WIDTH = 16


def _value(name: str, value: Any) -> str:
    if name == "accelerators":
        if not value:
            return "none"
        return ", ".join(
            a.name if a.memory_bytes is None else f"{a.name} ({format_gib(a.memory_bytes)})"
            for a in value
        )
    if name == "memory_limit_bytes" and value is None:
        return "none"
    if value is None:
        return "unknown"
    if name in ("memory_bytes", "memory_limit_bytes"):
        return format_gib(value)
    return str(value)


def _row(label: str, value: str, note: str | None = None) -> str:
    text = f"  {label:<{LABEL_WIDTH}} {value}"
    return f"{text:<{LABEL_WIDTH + 24}}  [{note}]" if note else text


def _memory_rows(memory: MemorySample, swap: SwapSpace) -> list[str]:
    missing = memory.missing
    in_use = f"{format_gib(memory.wired_bytes)} of {format_gib(memory.total_bytes)}"
    lines = [_row("in use", in_use, missing.get("wired_bytes") or missing.get("total_bytes"))]
    free = "unknown" if memory.free_share is None else f"{memory.free_share:.0%}"
    lines.append(_row("free", free, missing.get("free_share")))
    if swap.total_bytes == 0:
        swap_text = "none configured"
    else:
        swap_text = f"{format_gib(swap.used_bytes)} of {format_gib(swap.total_bytes)}"
    lines.append(_row("swap", swap_text, swap.source or swap.reason))
    for gpu in memory.gpus:
        used = f"{format_gib(gpu.used_bytes)} of {format_gib(gpu.total_bytes)}"
        lines.append(_row(f"gpu {gpu.index}", used, gpu.name))
    return lines


def report_lines(report: DoctorReport) -> list[str]:
    """The report as aligned lines; a note in brackets gives each value's source or why it
    is missing."""
    device = report.device
    lines = [f"config: {config_in_use(report.config)}", f"platform: {report.platform}", "device:"]
    for label, name in DEVICE_ROWS:
        note = device.missing.get(name) or device.sources.get(name)
        lines.append(_row(label, _value(name, getattr(device, name)), note))
    lines.append("memory now:")
    lines.extend(_memory_rows(report.memory, report.swap))
    lines.append(f"production runner ({report.config.runner} at {report.config.production}):")
    if report.runner is None:
        lines.append(_row("identity", "unknown", report.runner_error))
    else:
        runner = report.runner
        lines.append(_row("version", runner.version or "unknown", runner.missing.get("version")))
        lines.append(_row("model", runner.model))
        digest = runner.model_digest or "unknown"
        lines.append(_row("model digest", digest, runner.missing.get("model_digest")))
        lines.extend(_settings_rows(runner))
    lines.append(_row("window", str(report.config.window)))
    for difference in report.drift:
        lines.append(f"  differs from the config: {difference}")
    if report.fingerprint is None:
        lines.append(f"fingerprint: none — {report.fingerprint_missing}")
    else:
        lines.append(f"fingerprint: {report.fingerprint.id}")
    return lines


def _settings_rows(runner: RunnerInfo) -> list[str]:
    """Production's own settings (fingerprinted) and the slots it serves, where known."""
    rows: list[str] = []
    source = runner.settings_source or None
    why = runner.missing.get("settings")
    if runner.settings:
        for name, value in runner.settings.items():
            rows.append(_row("settings" if not rows else "", f"{name}={value}", source))
    elif source is not None or why is not None:
        rows.append(_row("settings", "unknown" if why else "none", why or source))
    if runner.serving_slots is not None:
        rows.append(_row("serving slots", str(runner.serving_slots)))
    return rows


__all__ = ["DEVICE_ROWS", "DoctorReport", "config_in_use", "gather", "report_lines"]
