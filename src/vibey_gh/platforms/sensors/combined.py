"""Several sensor sources read as one, and the one place a platform picks its sources."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...interfaces.readings import Reading, SensorReport, SensorSource, missing
from ...interfaces.slots_interface import CommandRunner
from ..nvidia import NoNvidiaDriver, NvmlGpus
from .darwin_pmset import PmsetThermSensors
from .linux_sys import LinuxSysSensors
from .nvidia_sensors import NvidiaSmiSensors, NvmlSensors


class CombinedSensors:
    def __init__(self, sources: Sequence[SensorSource]) -> None:
        self.sources = tuple(sources)

    def read(self) -> SensorReport:
        readings: dict[str, Reading] = {}
        notes: dict[str, str] = {}
        for source in self.sources:
            report = source.read()
            readings.update(report.readings)
            notes.update(report.notes)
        return SensorReport(readings, notes)


class NoSensors:
    """No sensor source: one reading that says why."""

    def __init__(self, platform: str, reason: str | None = None) -> None:
        self.platform = platform
        self.reason = reason

    def read(self) -> SensorReport:
        if self.reason is not None:
            return SensorReport({"gpu.sensors": missing(self.reason)})
        return SensorReport({"sensors": missing(f"no sensor source on {self.platform}")})


def sensors_for(
    family: str, root: Path, run: CommandRunner, gpus: NvmlGpus | NoNvidiaDriver | None = None
) -> SensorSource:
    """Linux: /sys, and NVIDIA's sensors (NVML through `gpus`, the memory sampler's, else
    nvidia-smi; none where no NVIDIA driver is loaded); macOS: pmset; anything else: none."""
    if family == "linux":
        gpu: SensorSource = NvidiaSmiSensors(run)
        if isinstance(gpus, NvmlGpus):
            gpu = NvmlSensors(gpus, NvidiaSmiSensors(run))
        elif gpus is not None:
            gpu = NoSensors("this machine", gpus.reason)
        return CombinedSensors([LinuxSysSensors(root), gpu])
    if family == "darwin":
        return CombinedSensors([PmsetThermSensors(run)])
    return NoSensors(family)
