"""One sample per tick that holds any named reading: memory, swap, GPU memory, temperatures,
power, clocks, throttle reasons, the runner's resident memory.

A reading is a number with its unit, or `None` with the reason it could not be read (as psutil
reports what a platform lacks): never a silent zero. Names are dotted and stable, because they
are written to disk (`readings.jsonl` of a soak, the optional `readings` of a step's
`samples.jsonl`) and bounds name the readings they need:

  host.wired_bytes, host.used_bytes, host.total_bytes, host.free_share
  swap.in_bytes, swap.out_bytes                 cumulative counters since boot
  gpu<i>.used_bytes, gpu<i>.total_bytes         per GPU, from the memory sampler
  gpu<i>.temperature_c, gpu<i>.power_w, gpu<i>.power_limit_w, gpu<i>.sm_clock_mhz,
  gpu<i>.throttled                              NVIDIA: NVML or nvidia-smi (`platforms.sensors`)
  thermal.<zone>_c                              Linux thermal zones, named by their type
  cpu.freq_mhz, cpu.max_freq_mhz                Linux cpufreq (mean over the CPUs)
  cpu.speed_limit_pct, cpu.scheduler_limit_pct, thermal.warning_level, cpu.throttled
                                                macOS `pmset -g therm`
  runner.rss_bytes                              the calibration runner's process tree
  production.busy                               1 while production held a model (a soak)

What a reading means, where the platform says, is kept beside it (`meaning`), so a report can
say "x86_pkg_temp: the CPU package" rather than a bare zone number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import msgspec
from msgspec import field
from msgspec.structs import force_setattr

from .samples import MemorySample

# a reading named `<source>.throttled` is 1 while that source slows itself down (its reasons
# in the tick's notes under the same name), 0 while it does not
THROTTLED_SUFFIX = ".throttled"


class Reading(msgspec.Struct, frozen=True, omit_defaults=True):
    """One named value: a number, or None with why. Written by `as_json` (no unit, reason or
    meaning when there is none); read back by `lenient_sample`."""

    value: float | None
    unit: str = ""
    reason: str | None = None
    meaning: str | None = None

    def __post_init__(self) -> None:
        # a reason only beside a missing value, always one there; no empty meaning
        reason = None if self.value is not None else (self.reason or "not read")
        if reason != self.reason:
            force_setattr(self, "reason", reason)
        if self.meaning == "":
            force_setattr(self, "meaning", None)


class SensorReport(msgspec.Struct, frozen=True):
    """What one source read in one tick: its readings and the words beside them."""

    readings: Mapping[str, Reading] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)


class SensorSource(Protocol):
    """A platform's readings beyond memory (temperatures, power, clocks, throttling): read
    once per tick; a reading it cannot take is None with its reason, never an error."""

    def read(self) -> SensorReport: ...


def missing(reason: str, unit: str = "") -> Reading:
    return Reading(None, unit, reason)


class ReadingSample(msgspec.Struct, frozen=True, omit_defaults=True):
    """Every reading of one tick, by name. `notes`: words a source reported beside its
    numbers (the names of active throttle reasons, a thermal warning), by source."""

    t: float
    readings: Mapping[str, Reading]  # written even when empty
    notes: Mapping[str, str] = field(default_factory=dict)

    def value(self, name: str) -> float | None:
        reading = self.readings.get(name)
        return None if reading is None else reading.value

    def why_missing(self, name: str) -> str:
        reading = self.readings.get(name)
        if reading is None:
            return "no source on this machine reads it"
        return reading.reason or "read"

    def names(self, prefix: str = "") -> list[str]:
        return sorted(name for name in self.readings if name.startswith(prefix))

    def with_report(self, report: SensorReport) -> ReadingSample:
        readings = {**self.readings, **report.readings}
        return ReadingSample(self.t, readings, {**self.notes, **report.notes})

    def __post_init__(self) -> None:
        # written by name, so a tick's line does not depend on which source read first
        if list(self.readings) != sorted(self.readings):
            force_setattr(self, "readings", dict(sorted(self.readings.items())))


def lenient_sample(data: Mapping[str, Any]) -> ReadingSample:
    """A tick as written (`as_json`), read leniently: a reading that is hostile or damaged
    reads as missing, so the tick keeps its other readings (`checked` would refuse it all)."""
    raw = data.get("readings")
    readings = {
        str(name): _lenient_reading(value)
        for name, value in (raw.items() if isinstance(raw, dict) else ())
        if isinstance(value, dict)
    }
    notes = data.get("notes")
    t = data.get("t")
    return ReadingSample(
        float(t) if isinstance(t, int | float) else 0.0,
        readings,
        {str(k): str(v) for k, v in notes.items()} if isinstance(notes, dict) else {},
    )


def _lenient_reading(data: Mapping[str, Any]) -> Reading:
    value = data.get("value")
    number = (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    )
    reason, meaning, unit = data.get("reason"), data.get("meaning"), data.get("unit")
    return Reading(
        number,
        unit if isinstance(unit, str) else "",
        reason if isinstance(reason, str) else None,
        meaning if isinstance(meaning, str) else None,
    )


def _memory_reading(sample: MemorySample, field_name: str, unit: str) -> Reading:
    value = getattr(sample, field_name)
    if value is None:
        return Reading(None, unit, sample.missing.get(field_name, "not read"))
    return Reading(float(value), unit)


_MEMORY_FIELDS = (
    ("host.wired_bytes", "wired_bytes", "B"),
    ("host.used_bytes", "used_bytes", "B"),
    ("host.total_bytes", "total_bytes", "B"),
    ("host.free_share", "free_share", ""),
    ("swap.in_bytes", "swap_in_bytes", "B"),
    ("swap.out_bytes", "swap_out_bytes", "B"),
)


def memory_readings(sample: MemorySample) -> dict[str, Reading]:
    """The memory sampler's tick as named readings (the memory sample's wire format is kept
    as it was; this is the same tick under the readings' names)."""
    readings = {
        name: _memory_reading(sample, field_name, unit) for name, field_name, unit in _MEMORY_FIELDS
    }
    for gpu in sample.gpus:
        for suffix, value in (("used_bytes", gpu.used_bytes), ("total_bytes", gpu.total_bytes)):
            reason = (
                None if value is not None else sample.missing.get(f"gpu{gpu.index}", "not read")
            )
            readings[f"gpu{gpu.index}.{suffix}"] = Reading(
                None if value is None else float(value), "B", reason, gpu.name
            )
    return readings


def sample_of(memory: MemorySample, *more: Mapping[str, Reading]) -> ReadingSample:
    """One tick: the memory sample's readings and those of any other source."""
    readings = memory_readings(memory)
    for source in more:
        readings.update(source)
    return ReadingSample(memory.t, readings)


def max_of(sample: ReadingSample, names: Iterable[str]) -> float | None:
    values = [v for name in names if (v := sample.value(name)) is not None]
    return max(values) if values else None
