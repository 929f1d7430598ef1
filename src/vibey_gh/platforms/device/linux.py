"""Linux: the device from /sys, /proc and /etc/os-release; memory from /proc and cgroups.

Both classes read files under an injected root (tests build trees under a temporary folder).
The sampler opens a handful of small files per tick and never starts a process; GPU memory
comes from NVML, whose handles stay open between ticks.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ...clock import SYSTEM_CLOCK, Clock
from ...interfaces.identity import Accelerator, DeviceFacts
from ...interfaces.samples import MemorySample
from ..nvidia import (
    NVIDIA_SMI_QUERY,
    GpuReading,
    NoNvidiaDriver,
    NvmlGpus,
    gpus_for,
    parse_nvidia_smi_csv,
)
from ..process.commands import SubprocessCommandRunner, read_output
from .procfs import (
    CgroupMemoryFiles,
    FileTree,
    find_cgroup_memory,
    parse_cgroup_bytes,
    parse_cpuinfo_processor,
    parse_meminfo,
    parse_os_release,
    pick_fields,
)
from .readings import SwapSpace, format_gib

if TYPE_CHECKING:
    from ...interfaces.samples import GpuMemory
    from ...interfaces.slots_interface import CommandRunner

DMI_PRODUCT = "/sys/class/dmi/id/product_name"
DMI_VENDOR = "/sys/class/dmi/id/sys_vendor"
DEVICE_TREE_MODEL = "/proc/device-tree/model"
CPUINFO = "/proc/cpuinfo"
MEMINFO = "/proc/meminfo"
VMSTAT = "/proc/vmstat"
OS_RELEASE = ("/etc/os-release", "/usr/lib/os-release")
MEMINFO_FIELDS = ("MemTotal", "MemAvailable")
VMSTAT_FIELDS = ("pswpin", "pswpout")


def _page_size() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 4096


class CgroupLimit:
    """This cgroup's memory limit, if one sits below physical memory."""

    def __init__(self, tree: FileTree) -> None:
        self.tree = tree
        self.files: CgroupMemoryFiles | None = find_cgroup_memory(tree)

    def limit(self, physical: int | None) -> tuple[int | None, str]:
        """(limit, source) when a limit applies, else (None, why there is none)."""
        if self.files is None:
            return None, "no cgroup memory files (no memory.max or memory.limit_in_bytes)"
        text, reason = self.tree.read(self.files.limit)
        if text is None:
            return None, reason or "unreadable"
        try:
            value = parse_cgroup_bytes(text)
        except ValueError:
            return None, f"{self.files.limit} holds {text.strip()!r}, not a byte count"
        where = f"{self.files.limit} (cgroup v{self.files.version})"
        if value is None:
            return None, f"no cgroup limit ({self.files.limit}: {text.strip()})"
        if physical is not None and value >= physical:
            return None, f"cgroup limit {format_gib(value)} is not below physical memory"
        return value, where

    def usage(self) -> tuple[int | None, str | None]:
        if self.files is None:
            return None, "no cgroup memory controller found"
        text, reason = self.tree.read(self.files.usage)
        if text is None:
            return None, reason
        try:
            return int(text.strip()), None
        except ValueError:
            return None, f"{self.files.usage} holds {text.strip()!r}, not a byte count"


class LinuxDeviceProbe:
    """What this Linux machine is: DMI, cpuinfo, meminfo, cgroup limit, os-release, GPUs."""

    def __init__(
        self,
        root: Path = Path("/"),
        nvml: NvmlGpus | NoNvidiaDriver | None = None,
        run: CommandRunner | None = None,
    ) -> None:
        self.tree = FileTree(root)
        self.nvml = nvml if nvml is not None else gpus_for(root)
        self.run = run if run is not None else SubprocessCommandRunner()

    def describe(self) -> DeviceFacts:
        sources: dict[str, str] = {}
        missing: dict[str, str] = {}

        def note(name: str, value: object, source: str | None, reason: str | None) -> None:
            if value is None:
                missing[name] = reason or "unknown"
            elif source:
                sources[name] = source

        model, source, reason = self._hardware_model()
        note("hardware_model", model, source, reason)
        processor, source, reason = self._processor()
        note("processor", processor, source, reason)
        memory, reason = self._memory_total()
        note("memory_bytes", memory, f"{MEMINFO} MemTotal", reason)
        limit, where = CgroupLimit(self.tree).limit(memory)
        note("memory_limit_bytes", limit, where, where)
        accelerators, source, reason = self._accelerators()
        if accelerators:
            sources["accelerators"] = source
        else:
            missing["accelerators"] = reason
        os_name, os_version, source, name_reason, version_reason = self._os()
        note("os_name", os_name, f"{source} NAME", name_reason)
        note("os_version", os_version, f"{source} VERSION_ID", version_reason)
        return DeviceFacts(
            hardware_model=model,
            processor=processor,
            memory_bytes=memory,
            accelerators=accelerators,
            os_name=os_name,
            os_version=os_version,
            memory_limit_bytes=limit,
            sources=sources,
            missing=missing,
        )

    def _hardware_model(self) -> tuple[str | None, str | None, str | None]:
        product, product_reason = self.tree.read(DMI_PRODUCT)
        product = (product or "").strip()
        if product:
            vendor = (self.tree.read(DMI_VENDOR)[0] or "").strip()
            if vendor and not product.lower().startswith(vendor.lower()):
                return f"{vendor} {product}", f"{DMI_VENDOR} + product_name", None
            return product, DMI_PRODUCT, None
        # boards without firmware tables (ARM single-board computers) name themselves here
        tree_model = (self.tree.read(DEVICE_TREE_MODEL)[0] or "").strip("\x00 \n")
        if tree_model:
            return tree_model, DEVICE_TREE_MODEL, None
        why = product_reason or f"{DMI_PRODUCT} is empty"
        return None, None, f"no DMI on this machine ({why}) and no {DEVICE_TREE_MODEL}"

    def _processor(self) -> tuple[str | None, str | None, str | None]:
        text, reason = self.tree.read(CPUINFO)
        if text is None:
            return None, None, reason
        name, key = parse_cpuinfo_processor(text)
        if name is None:
            return None, None, f"{CPUINFO} names no processor (no 'model name' line)"
        return name, f"{CPUINFO} {key}", None

    def _memory_total(self) -> tuple[int | None, str | None]:
        text, reason = self.tree.read(MEMINFO)
        if text is None:
            return None, reason
        total = parse_meminfo(text).get("MemTotal")
        return total, None if total is not None else f"{MEMINFO} has no MemTotal"

    def _accelerators(self) -> tuple[tuple[Accelerator, ...], str, str]:
        reading = self.nvml.read()
        if isinstance(self.nvml, NoNvidiaDriver):
            return (), "", f"no NVIDIA GPU: {reading.reason}"
        if not reading.gpus:
            out, smi_reason = read_output(self.run, NVIDIA_SMI_QUERY)
            if out is not None:
                fallback = parse_nvidia_smi_csv(out)
                if fallback.gpus:
                    reading = fallback
                else:
                    smi_reason = fallback.reason
            if not reading.gpus:
                return (), "", f"no NVIDIA GPU: {reading.reason}; nvidia-smi: {smi_reason}"
        return _accelerators_from(reading), reading.source, ""

    def _os(self) -> tuple[str | None, str | None, str | None, str | None, str | None]:
        reasons = []
        for name in OS_RELEASE:
            text, reason = self.tree.read(name)
            if text is None:
                reasons.append(reason)
                continue
            values = parse_os_release(text)
            os_name = values.get("NAME") or None
            version = values.get("VERSION_ID") or None
            return (
                os_name,
                version,
                name,
                None if os_name else f"{name} has no NAME",
                None if version else f"{name} has no VERSION_ID (a rolling release?)",
            )
        why = "; ".join(r for r in reasons if r)
        return None, None, None, why, why


def _accelerators_from(reading: GpuReading) -> tuple[Accelerator, ...]:
    ordered = sorted(reading.gpus, key=lambda gpu: gpu.index)
    return tuple(Accelerator(g.name, g.total_bytes, "gpu", g.index) for g in ordered)


class LinuxMemorySampler:
    """One reading of host memory per call, from /proc, the cgroup and NVML; no subprocess.

    wired_bytes: MemTotal - MemAvailable (what the kernel cannot hand out without reclaiming
    from someone), or the cgroup's usage when a limit below physical memory applies.
    Swap counters: /proc/vmstat pswpin/pswpout (pages) x the page size, cumulative.
    """

    def __init__(
        self,
        root: Path = Path("/"),
        nvml: NvmlGpus | NoNvidiaDriver | None = None,
        clock: Clock = SYSTEM_CLOCK,
        page_size: int | None = None,
    ) -> None:
        self.tree = FileTree(root)
        self.nvml = nvml if nvml is not None else gpus_for(root)
        self.clock = clock
        self.page_size = page_size or _page_size()
        self.cgroup = CgroupLimit(self.tree)
        self._read_meminfo = self.tree.reader(MEMINFO)
        self._read_vmstat = self.tree.reader(VMSTAT)

    def sample(self) -> MemorySample:
        # imported here, not at the top: `slots allowed` uses this module for the device alone
        t = self.clock.monotonic()
        missing: dict[str, str] = {}
        text, reason = self._read_meminfo()
        meminfo = pick_fields(text, MEMINFO_FIELDS) if text is not None else {}
        total = meminfo.get("MemTotal")
        available = meminfo.get("MemAvailable")
        used: int | None = None
        free_share: float | None = None
        if total and available is not None:
            used = total - available
            free_share = available / total
        else:
            why = reason or f"{MEMINFO} lacks MemTotal or MemAvailable"
            for name in ("wired_bytes", "used_bytes", "free_share"):
                missing[name] = why
            if total is None:
                missing["total_bytes"] = why
        wired, budget = used, total
        limit, _ = self.cgroup.limit(total)
        if limit is not None:
            current, usage_reason = self.cgroup.usage()
            budget = limit
            if current is None:
                wired = used = free_share = None
                for name in ("wired_bytes", "used_bytes", "free_share"):
                    missing[name] = f"under a cgroup limit, but {usage_reason}"
            else:
                wired = used = current
                for name in ("wired_bytes", "used_bytes", "free_share"):
                    missing.pop(name, None)
                cgroup_free = max(0, limit - current) / limit
                free_share = cgroup_free if free_share is None else min(free_share, cgroup_free)
        swap_in, swap_out = self._swap_counters(missing)
        gpus = self._gpus(missing)
        return MemorySample(
            t=t,
            wired_bytes=wired,
            used_bytes=used,
            total_bytes=budget,
            free_share=free_share,
            swap_in_bytes=swap_in,
            swap_out_bytes=swap_out,
            gpus=gpus,
            missing=missing,
        )

    def _swap_counters(self, missing: dict[str, str]) -> tuple[int | None, int | None]:
        text, reason = self._read_vmstat()
        counters = pick_fields(text, VMSTAT_FIELDS) if text is not None else {}
        values: list[int | None] = []
        for field, key in (("swap_in_bytes", "pswpin"), ("swap_out_bytes", "pswpout")):
            pages = counters.get(key)
            if pages is None:
                missing[field] = reason or f"{VMSTAT} has no {key} counter"
                values.append(None)
            else:
                values.append(pages * self.page_size)
        return values[0], values[1]

    def _gpus(self, missing: dict[str, str]) -> tuple[GpuMemory, ...]:
        reading = self.nvml.read()
        if reading.reason:
            missing["gpus"] = reading.reason
        return reading.gpus

    def swap_space(self) -> SwapSpace:
        text, reason = self.tree.read(MEMINFO)
        if text is None:
            return SwapSpace(None, None, reason=reason)
        values = parse_meminfo(text)
        total, free = values.get("SwapTotal"), values.get("SwapFree")
        if total is None or free is None:
            return SwapSpace(None, None, reason=f"{MEMINFO} lacks SwapTotal or SwapFree")
        return SwapSpace(total, total - free, source=f"{MEMINFO} SwapTotal, SwapFree")
