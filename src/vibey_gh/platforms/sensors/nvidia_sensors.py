"""NVIDIA temperature, power against its limit, SM clock and throttle reasons: from NVML where
it starts (the handles the memory sampler already holds, no process per tick), else nvidia-smi.

One `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` per tick prints one line per GPU:
`0, 67, 251.20, 700.00, 1980, 0x0000000000000004`. A field the GPU does not report is `[N/A]`
or `[Not Supported]` (a None with that reason). The throttle mask is NVML's clocks event
reasons bitmask (nvmlClocksEventReason*, printed by nvidia-smi as `clocks_throttle_reasons.
active`); the reasons that slow a busy GPU down are told apart from those that cost nothing
(idle, a clock an administrator set, sync boost, the display clock).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...interfaces.readings import Reading, SensorReport, missing
from ...interfaces.slots_interface import CommandRunner
from ..nvidia import NOT_AVAILABLE, NvmlGpus
from ..process.commands import read_output

# NVML's constants (nvml.h): NVML_TEMPERATURE_GPU, NVML_CLOCK_SM
NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1

NVIDIA_SMI_SENSORS: tuple[str, ...] = (
    "nvidia-smi",
    "--query-gpu=index,temperature.gpu,power.draw,power.limit,clocks.sm,"
    "clocks_throttle_reasons.active",
    "--format=csv,noheader,nounits",
)
# NVML's bits (nvml.h, nvmlClocksEventReason*): name, and whether it slows a busy GPU
THROTTLE_BITS: tuple[tuple[int, str, bool], ...] = (
    (0x1, "gpu_idle", False),
    (0x2, "applications_clocks_setting", False),
    (0x4, "sw_power_cap", True),
    (0x8, "hw_slowdown", True),
    (0x10, "sync_boost", False),
    (0x20, "sw_thermal_slowdown", True),
    (0x40, "hw_thermal_slowdown", True),
    (0x80, "hw_power_brake_slowdown", True),
    (0x100, "display_clock_setting", False),
)
_FIELDS = (
    ("temperature_c", "C", "GPU core temperature"),
    ("power_w", "W", "power draw"),
    ("power_limit_w", "W", "the power limit in force"),
    ("sm_clock_mhz", "MHz", "streaming multiprocessor clock"),
)


def slowing_reasons(mask: int) -> list[str]:
    """The reasons in `mask` that slow a busy GPU down (idle and set clocks cost nothing)."""
    return [name for bit, name, slows in THROTTLE_BITS if mask & bit and slows]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_sensor_csv(text: str) -> SensorReport:
    readings: dict[str, Reading] = {}
    notes: dict[str, str] = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != 2 + len(_FIELDS) or not cells[0].isdigit():
            continue
        prefix = f"gpu{cells[0]}"
        for (suffix, unit, meaning), cell in zip(_FIELDS, cells[1:-1], strict=True):
            value = None if cell in NOT_AVAILABLE else _number(cell)
            why = None if value is not None else f"nvidia-smi printed {cell or 'nothing'!r}"
            readings[f"{prefix}.{suffix}"] = Reading(value, unit, why, meaning)
        mask_text = cells[-1]
        try:
            mask = int(mask_text, 16)
        except ValueError:
            readings[f"{prefix}.throttled"] = missing(f"nvidia-smi printed {mask_text!r}")
            continue
        slowing = slowing_reasons(mask)
        readings[f"{prefix}.throttled"] = Reading(
            1.0 if slowing else 0.0, "", None, "clocks event reasons"
        )
        if slowing:
            notes[f"{prefix}.throttled"] = ", ".join(slowing)
    if not readings:
        return SensorReport({"gpu.sensors": missing("nvidia-smi listed no GPU")})
    return SensorReport(readings, notes)


class NvidiaSmiSensors:
    """The GPUs' sensors through nvidia-smi (absent tool or driver: one None with why)."""

    def __init__(self, run: CommandRunner) -> None:
        self.run = run
        # a tool that is not installed is not looked for again at every tick
        self.absent: str | None = None

    def read(self) -> SensorReport:
        if self.absent is not None:
            return SensorReport({"gpu.sensors": missing(self.absent)})
        text, reason = read_output(self.run, NVIDIA_SMI_SENSORS)
        if text is None:
            why = reason or "nvidia-smi printed nothing"
            if why.endswith("not found"):
                self.absent = why
            return SensorReport({"gpu.sensors": missing(why)})
        return parse_sensor_csv(text)


class NvmlSensors:
    """The sensors through NVML (`platforms.nvidia.NvmlGpus`); nvidia-smi when NVML cannot
    start (nvidia-ml-py not installed, a driver NVML does not speak to)."""

    def __init__(self, gpus: NvmlGpus, fallback: NvidiaSmiSensors) -> None:
        self.gpus, self.fallback = gpus, fallback

    def read(self) -> SensorReport:
        found = self.gpus.devices()
        if isinstance(found, str):
            return self.fallback.read()
        lib, handles, errors = found
        calls: tuple[tuple[str, Callable[[Any], Any], float], ...] = (
            ("temperature_c", lambda h: lib.nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU), 1.0),
            ("power_w", lambda h: lib.nvmlDeviceGetPowerUsage(h), 1e-3),  # milliwatts
            ("power_limit_w", lambda h: lib.nvmlDeviceGetEnforcedPowerLimit(h), 1e-3),
            ("sm_clock_mhz", lambda h: lib.nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM), 1.0),
        )
        # renamed "clocks event reasons" in NVML 12.2; the old name still answers on older ones
        reasons = getattr(lib, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            lib, "nvmlDeviceGetCurrentClocksThrottleReasons", None
        )
        readings: dict[str, Reading] = {}
        notes: dict[str, str] = {}
        for index, handle in handles:
            prefix = f"gpu{index}"
            for (suffix, call, scale), (_name, unit, meaning) in zip(calls, _FIELDS, strict=True):
                try:
                    value = float(call(handle)) * scale
                    readings[f"{prefix}.{suffix}"] = Reading(value, unit, None, meaning)
                except errors as exc:
                    readings[f"{prefix}.{suffix}"] = Reading(None, unit, f"NVML: {exc}", meaning)
            try:
                if reasons is None:
                    raise OSError("this NVML has no clocks event reasons")
                slowing = slowing_reasons(int(reasons(handle)))
            except (*errors, OSError) as exc:  # type: ignore[misc]
                readings[f"{prefix}.throttled"] = missing(f"NVML: {exc}")
                continue
            flag = 1.0 if slowing else 0.0
            readings[f"{prefix}.throttled"] = Reading(flag, "", None, "clocks event reasons")
            if slowing:
                notes[f"{prefix}.throttled"] = ", ".join(slowing)
        return SensorReport(readings, notes)
