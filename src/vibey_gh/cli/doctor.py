"""`vibey-gh doctor`: renders what `vibey_gh.doctor` gathers (facts, sources, fingerprint)."""

from __future__ import annotations

from typing import Any

import click

from ..config import load_config
from ..doctor import DEVICE_ROWS, DoctorReport, config_in_use, gather
from ..interfaces import schema
from ..interfaces.slots_interface import MemorySample, RunnerInfo
from ..platforms.device.readings import SwapSpace, format_gib
from ..slots.measurement.readiness import Check
from .common import collaborators, emit_json, json_option, library_errors, window_option

LABEL_WIDTH = 16
CHECK_WIDTH = 18


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


def render(report: DoctorReport) -> list[str]:
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


@click.command()
@click.option("--model", help="Identify this model instead of the configured one.")
@window_option("Fingerprint for this window.")
@json_option
@library_errors
def doctor(model: str | None, window: int | None, as_json: bool) -> None:
    """What was detected on this machine: every device fact and where it came from (or why it
    is missing), memory now, the production runner's identity, the fingerprint that evidence
    is keyed to, and everything `slots calibrate` needs for the configured runner: the
    calibration binary (found, runs, its version, the same as production's), the model (the
    file, or pulled in Ollama), the calibration port (free, or who holds it), the state folder
    (writable), production (answering, idle, its parallelism) and the checkpoints on disk.
    Each line not "ok" says what to do. Always exits 0 once the config is readable: doctor
    reports, it does not judge (`--json` has calibrate.ready for scripts).

    \b
    Examples:
      vibey-gh doctor
      vibey-gh doctor --json
      vibey-gh doctor --model qwen3:8b --window 32768
    """
    from ..slots.measurement.readiness import calibration_checks, real_parts

    config = load_config().with_overrides(model=model, window=window)
    parts = collaborators()
    report = gather(config, parts.probes(), parts.identify_production, parts.production_drift)
    layout = parts.layout()
    readiness = real_parts(layout, report.runner, report.runner_error)(config)
    today = report.fingerprint.id if report.fingerprint else None
    checks = calibration_checks(config, layout, readiness, today)
    if as_json:
        ready = not any(check.status == "fail" for check in checks)
        emit_json(
            {
                **report.to_json(),
                "state_dir": str(layout.root),
                "calibrate": {"ready": ready, "checks": [schema.as_json(c) for c in checks]},
            }
        )
    else:
        lines = render(report)
        lines.insert(1, f"state folder: {layout.root}")
        for line in lines + render_checks(checks):
            click.echo(line)


def render_checks(checks: list[Check]) -> list[str]:
    """What calibrate needs, one line each, and what to do under each line not ok."""
    failed = sum(check.status == "fail" for check in checks)
    headline = "ready" if not failed else f"{failed} problem(s) to fix first"
    lines = [f"calibrate needs ({headline}):"]
    for check in checks:
        lines.append(f"  {check.status:<4} {check.name:<{CHECK_WIDTH}} {check.detail}")
        if check.todo and check.status != "ok":
            lines.append(f"       {'':<{CHECK_WIDTH}} → {check.todo}")
    return lines


__all__ = ["doctor", "render", "render_checks"]
