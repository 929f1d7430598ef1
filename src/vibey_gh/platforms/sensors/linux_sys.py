"""Linux thermal zones and CPU frequency, read from /sys under an injected root.

/sys/class/thermal/thermal_zone<i>/type names the sensor and .../temp holds millidegrees
Celsius (the kernel's thermal sysfs ABI). /sys/devices/system/cpu/cpu<i>/cpufreq/
scaling_cur_freq and cpuinfo_max_freq hold kHz. A machine without them (a VM, a container)
gets each reading None with the path that was absent.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...interfaces.readings import Reading, SensorReport, missing

THERMAL = "sys/class/thermal"
CPUS = "sys/devices/system/cpu"
_ZONE = re.compile(r"thermal_zone(\d+)")
_CPU = re.compile(r"cpu(\d+)")
_NAME = re.compile(r"[^a-z0-9]+")

# what a zone's type means, where the kernel drivers that name it say so
ZONE_MEANINGS = {
    "x86_pkg_temp": "the CPU package (Intel)",
    "acpitz": "the ACPI thermal zone (board or chassis)",
    "k10temp": "the CPU die (AMD)",
    "coretemp": "the CPU cores (Intel)",
    "cpu-thermal": "the CPU (system on a chip)",
    "cpu_thermal": "the CPU (system on a chip)",
    "soc_thermal": "the system on a chip",
    "gpu-thermal": "the integrated GPU",
    "gpu_thermal": "the integrated GPU",
    "pch_skylake": "the platform controller hub (chipset)",
    "pch_cannonlake": "the platform controller hub (chipset)",
    "iwlwifi_1": "the Wi-Fi adapter",
    "int3400 thermal": "Intel DPTF's virtual zone (no sensor of its own)",
    "tcpu": "the CPU (Intel DPTF)",
    "b0d4": "the CPU (Intel DPTF)",
    "nvme": "an NVMe drive",
}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _sorted_numbered(folder: Path, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    found = [(int(m.group(1)), p) for p in entries if (m := pattern.fullmatch(p.name))]
    return sorted(found)


def reading_name(zone_type: str, index: int, taken: set[str]) -> str:
    """`thermal.<type>_c`, the type made a name; a type seen twice keeps its zone number."""
    base = _NAME.sub("_", zone_type.lower()).strip("_") or f"zone{index}"
    name = f"thermal.{base}_c"
    return f"thermal.{base}{index}_c" if name in taken else name


class LinuxSysSensors:
    """Thermal zones and CPU frequency under `root` (the machine's `/` in production)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self) -> SensorReport:
        readings: dict[str, Reading] = {}
        readings.update(self._zones())
        readings.update(self._frequency())
        return SensorReport(readings)

    def _zones(self) -> dict[str, Reading]:
        zones = _sorted_numbered(self.root / THERMAL, _ZONE)
        if not zones:
            return {"thermal.zones": missing(f"/{THERMAL} has no thermal_zone (no sensor exposed)")}
        out: dict[str, Reading] = {}
        for index, zone in zones:
            kind = _read(zone / "type") or f"zone{index}"
            name = reading_name(kind, index, set(out))
            meaning = ZONE_MEANINGS.get(kind.lower())
            text = _read(zone / "temp")
            try:
                value = int(text) / 1000.0 if text is not None else None
            except ValueError:
                value = None
            if value is None:
                why = f"/{THERMAL}/{zone.name}/temp " + (
                    "unreadable" if text is None else f"holds {text!r}"
                )
                out[name] = Reading(None, "C", why, meaning)
            else:
                out[name] = Reading(value, "C", None, meaning)
        return out

    def _frequency(self) -> dict[str, Reading]:
        current: list[float] = []
        highest: list[float] = []
        for _index, cpu in _sorted_numbered(self.root / CPUS, _CPU):
            for file, into in (("scaling_cur_freq", current), ("cpuinfo_max_freq", highest)):
                text = _read(cpu / "cpufreq" / file)
                if text is not None and text.isdigit():
                    into.append(int(text) / 1000.0)
        why = f"/{CPUS}/cpu*/cpufreq is absent (no frequency scaling exposed)"
        return {
            "cpu.freq_mhz": Reading(sum(current) / len(current), "MHz", None, "mean over the CPUs")
            if current
            else missing(why, "MHz"),
            "cpu.max_freq_mhz": Reading(max(highest), "MHz") if highest else missing(why, "MHz"),
        }
