"""macOS: the device from sysctl, system_profiler and sw_vers; memory from vm_stat,
memory_pressure and sysctl vm.swapusage.

Every tool runs through the injected CommandRunner, so tests feed captured output. Parsers are
pure functions of the tool's text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...clock import SYSTEM_CLOCK, Clock
from ...guarded import loads_json
from ...interfaces.slots_interface import Accelerator, CommandRunner, DeviceFacts, MemorySample
from ..process.commands import read_output
from .readings import SwapSpace

SYSCTL_DEVICE = ("sysctl", "-n", "hw.model", "hw.memsize", "machdep.cpu.brand_string")
SYSTEM_PROFILER = ("system_profiler", "SPDisplaysDataType", "-json")
SW_VERS = ("sw_vers", "-productVersion")
VM_STAT = ("vm_stat",)
MEMORY_PRESSURE = ("memory_pressure",)
SWAPUSAGE = ("sysctl", "vm.swapusage")
MEMSIZE = ("sysctl", "-n", "hw.memsize")

_UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


# ---------------------------------------------------------------------------------------------
# Parsers
# ---------------------------------------------------------------------------------------------


def parse_sw_vers(text: str) -> tuple[str | None, str | None]:
    """(product name, version) from `sw_vers` (either tab layout) or `sw_vers -productVersion`."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    if fields:
        return fields.get("ProductName") or None, fields.get("ProductVersion") or None
    version = text.strip()
    return None, version or None


def _size(text: str) -> int | None:
    """'8 GB', '1536 MB', '3072.00M' -> bytes (binary units, as macOS reports them)."""
    match = re.fullmatch(r"\s*([\d.]+)\s*([BKMGT])B?\s*", text, re.IGNORECASE)
    if not match:
        return None
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def parse_displays(text: str) -> tuple[Accelerator, ...]:
    """GPUs from `system_profiler SPDisplaysDataType -json`.

    Built-in GPUs (Apple Silicon, Intel) share host memory: kind "integrated", no memory of
    their own. Apple Silicon names carry the core count, which differs between chips of one name.
    """
    data = loads_json(text)  # a tool's output is read as any input is: bounded
    items = data.get("SPDisplaysDataType") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ValueError("no SPDisplaysDataType list")
    accelerators = []
    for index, item in enumerate(i for i in items if isinstance(i, dict)):
        name = str(item.get("sppci_model") or item.get("_name") or "unknown GPU")
        cores = item.get("sppci_cores")
        if cores:
            name = f"{name} ({cores} GPU cores)"
        builtin = item.get("sppci_bus") == "spdisplays_builtin"
        vram = item.get("spdisplays_vram")
        memory = None if builtin or not isinstance(vram, str) else _size(vram)
        accelerators.append(Accelerator(name, memory, "integrated" if builtin else "gpu", index))
    return tuple(accelerators)


def parse_vm_stat(text: str) -> tuple[int, dict[str, int]]:
    """(page size, {label: pages}) from `vm_stat`; labels as printed, e.g. "Pages wired down"."""
    lines = text.splitlines()
    header = re.search(r"page size of (\d+) bytes", lines[0] if lines else "")
    if not header:
        raise ValueError("vm_stat output has no page size header")
    counts: dict[str, int] = {}
    for line in lines[1:]:
        label, sep, value = line.rpartition(":")
        value = value.strip().rstrip(".")
        if sep and value.isdigit():
            counts[label.strip().strip('"')] = int(value)
    return int(header.group(1)), counts


def parse_memory_pressure(text: str) -> tuple[int | None, float | None]:
    """(physical bytes, free share 0..1) from `memory_pressure` or `memory_pressure -Q`."""
    total = re.search(r"The system has (\d+)", text)
    free = re.search(r"System-wide memory free percentage:\s*(\d+)%", text)
    return (
        int(total.group(1)) if total else None,
        int(free.group(1)) / 100 if free else None,
    )


def parse_swapusage(text: str) -> tuple[int, int]:
    """(total, used) bytes from `sysctl vm.swapusage`."""
    total = re.search(r"total\s*=\s*([\d.]+[BKMGT])", text)
    used = re.search(r"used\s*=\s*([\d.]+[BKMGT])", text)
    total_bytes = _size(total.group(1)) if total else None
    used_bytes = _size(used.group(1)) if used else None
    if total_bytes is None or used_bytes is None:
        raise ValueError(f"unreadable vm.swapusage: {text.strip()!r}")
    return total_bytes, used_bytes


# ---------------------------------------------------------------------------------------------
# Probe and sampler
# ---------------------------------------------------------------------------------------------


class DarwinDeviceProbe:
    """What this Mac is: sysctl for model, memory and CPU; system_profiler; sw_vers."""

    def __init__(self, run: CommandRunner) -> None:
        self.run = run

    def describe(self) -> DeviceFacts:
        sources: dict[str, str] = {}
        missing: dict[str, str] = {}
        values = self._sysctl_values()
        fields: dict[str, Any] = {}
        for name, key, convert in (
            ("hardware_model", "hw.model", str),
            ("memory_bytes", "hw.memsize", int),
            ("processor", "machdep.cpu.brand_string", str),
        ):
            raw, reason = values[key]
            value: Any = None
            if raw:
                try:
                    value = convert(raw)
                except ValueError:
                    reason = f"sysctl {key} gave {raw!r}"
            fields[name] = value
            if value is None:
                missing[name] = reason or f"sysctl {key} gave nothing"
            else:
                sources[name] = f"sysctl {key}"
        accelerators: tuple[Accelerator, ...] = ()
        out, reason = read_output(self.run, SYSTEM_PROFILER)
        if out is not None:
            try:
                accelerators = parse_displays(out)
            except (ValueError, json.JSONDecodeError) as exc:
                reason = f"unreadable system_profiler output: {exc}"
        if accelerators:
            sources["accelerators"] = "system_profiler SPDisplaysDataType"
        else:
            missing["accelerators"] = reason or "system_profiler lists no GPU"
        out, reason = read_output(self.run, SW_VERS)
        version = parse_sw_vers(out)[1] if out is not None else None
        if version is None:
            missing["os_version"] = reason or "sw_vers gave no version"
        else:
            sources["os_version"] = "sw_vers -productVersion"
        sources["os_name"] = "the platform (darwin)"
        missing["memory_limit_bytes"] = "no memory limit below physical memory on macOS"
        return DeviceFacts(
            hardware_model=fields["hardware_model"],
            processor=fields["processor"],
            memory_bytes=fields["memory_bytes"],
            accelerators=accelerators,
            os_name="macOS",
            os_version=version,
            sources=sources,
            missing=missing,
        )

    def _sysctl_values(self) -> dict[str, tuple[str | None, str | None]]:
        keys = SYSCTL_DEVICE[2:]
        out, _ = read_output(self.run, SYSCTL_DEVICE)
        lines = out.splitlines() if out is not None else []
        if len(lines) == len(keys):
            return {key: (line.strip(), None) for key, line in zip(keys, lines, strict=True)}
        # one unknown key makes sysctl skip its line: ask key by key so lines cannot shift
        values: dict[str, tuple[str | None, str | None]] = {}
        for key in keys:
            one, reason = read_output(self.run, ("sysctl", "-n", key))
            values[key] = ((one or "").strip() or None, reason)
        return values


class DarwinMemorySampler:
    """One reading per call from vm_stat (wired, active, compressor, swap counters) and
    memory_pressure (the free share macOS itself reports)."""

    def __init__(self, run: CommandRunner, clock: Clock = SYSTEM_CLOCK) -> None:
        self.run = run
        self.clock = clock
        self._physical: int | None = None

    def sample(self) -> MemorySample:
        t = self.clock.monotonic()
        missing: dict[str, str] = {}
        wired = used = swap_in = swap_out = None
        out, reason = read_output(self.run, VM_STAT)
        if out is not None:
            try:
                page, pages = parse_vm_stat(out)
            except ValueError as exc:
                reason = str(exc)
            else:
                wired = _pages(pages, "Pages wired down", page)
                active = _pages(pages, "Pages active", page)
                compressor = _pages(pages, "Pages occupied by compressor", page)
                if None not in (wired, active, compressor):
                    used = (wired or 0) + (active or 0) + (compressor or 0)
                swap_in = _pages(pages, "Swapins", page)
                swap_out = _pages(pages, "Swapouts", page)
        for name, value in (
            ("wired_bytes", wired),
            ("used_bytes", used),
            ("swap_in_bytes", swap_in),
            ("swap_out_bytes", swap_out),
        ):
            if value is None:
                missing[name] = reason or "vm_stat lacks the counter"
        total, free_share = None, None
        out, reason = read_output(self.run, MEMORY_PRESSURE)
        if out is not None:
            total, free_share = parse_memory_pressure(out)
        if free_share is None:
            missing["free_share"] = reason or "memory_pressure gave no free percentage"
        total = total or self._memsize(missing)
        missing["gpus"] = "integrated GPUs share host memory: counted in wired memory"
        return MemorySample(
            t=t,
            wired_bytes=wired,
            used_bytes=used,
            total_bytes=total,
            free_share=free_share,
            swap_in_bytes=swap_in,
            swap_out_bytes=swap_out,
            missing=missing,
        )

    def _memsize(self, missing: dict[str, str]) -> int | None:
        if self._physical is None:
            out, reason = read_output(self.run, MEMSIZE)
            if out is None or not out.strip().isdigit():
                missing["total_bytes"] = reason or "sysctl hw.memsize gave no number"
                return None
            self._physical = int(out.strip())
        return self._physical

    def swap_space(self) -> SwapSpace:
        out, reason = read_output(self.run, SWAPUSAGE)
        if out is None:
            return SwapSpace(None, None, reason=reason)
        try:
            total, used = parse_swapusage(out)
        except ValueError as exc:
            return SwapSpace(None, None, reason=str(exc))
        return SwapSpace(total, used, source="sysctl vm.swapusage")


def _pages(pages: dict[str, int], label: str, page_size: int) -> int | None:
    count = pages.get(label)
    return None if count is None else count * page_size
