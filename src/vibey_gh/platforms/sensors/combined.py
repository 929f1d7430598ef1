"""Several sensor sources read as one, and the one place a platform picks its sources."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...interfaces.readings import Reading, SensorReport, SensorSource, missing
from ...interfaces.slots_interface import CommandRunner


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
    """A platform with no sensor source: one reading that says why."""

    def __init__(self, platform: str) -> None:
        self.platform = platform

    def read(self) -> SensorReport:
        return SensorReport({"sensors": missing(f"no sensor source on {self.platform}")})


def sensors_for(family: str, root: Path, run: CommandRunner) -> SensorSource:
    """Linux: /sys and nvidia-smi; macOS: pmset; anything else: none, said."""
    if family == "linux":
        from .linux_sys import LinuxSysSensors
        from .nvidia_sensors import NvidiaSmiSensors

        return CombinedSensors([LinuxSysSensors(root), NvidiaSmiSensors(run)])
    if family == "darwin":
        from .darwin_pmset import PmsetThermSensors

        return CombinedSensors([PmsetThermSensors(run)])
    return NoSensors(family)
