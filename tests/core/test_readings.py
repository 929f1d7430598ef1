"""One sample per tick of named readings: missing ones say why, and the JSON reads back."""

from __future__ import annotations

from vibey_gh.interfaces.readings import (
    Reading,
    SensorReport,
    lenient_sample,
    memory_readings,
    sample_of,
)
from vibey_gh.interfaces.samples import GpuMemory, MemorySample
from vibey_gh.interfaces.schema import as_json


def _memory(**changes: object) -> MemorySample:
    fields: dict[str, object] = {
        "t": 12.5, "wired_bytes": 4_000, "used_bytes": 6_000, "total_bytes": 10_000,
        "free_share": 0.4, "swap_in_bytes": 0, "swap_out_bytes": None,
        "missing": {"swap_out_bytes": "/proc/vmstat lacks pswpout"},
    }  # fmt: skip
    fields.update(changes)
    return MemorySample(**fields)  # type: ignore[arg-type]


def test_the_memory_sample_under_the_readings_names_keeps_its_reasons() -> None:
    gpus = (GpuMemory(0, "NVIDIA H200", 1 << 30, None),)
    readings = memory_readings(_memory(gpus=gpus, missing={"gpu0": "NVML: GPU is lost"}))
    assert readings["host.wired_bytes"] == Reading(4000.0, "B")
    assert readings["host.free_share"].value == 0.4
    assert readings["swap.out_bytes"].value is None
    assert readings["swap.out_bytes"].reason == "not read"
    assert readings["gpu0.used_bytes"].value == float(1 << 30)
    assert readings["gpu0.total_bytes"].reason == "NVML: GPU is lost"


def test_a_missing_reading_never_reads_back_as_zero() -> None:
    sample = sample_of(
        _memory(), {"gpu0.power_w": Reading(None, "W", "nvidia-smi printed '[N/A]'")}
    )
    sample = sample.with_report(
        SensorReport({"cpu.throttled": Reading(1.0)}, {"cpu.throttled": "CPU speed limited"})
    )
    back = lenient_sample(as_json(sample))
    assert back.value("gpu0.power_w") is None
    assert back.why_missing("gpu0.power_w") == "nvidia-smi printed '[N/A]'"
    assert back.why_missing("gpu7.power_w") == "no source on this machine reads it"
    assert back.value("host.used_bytes") == 6000.0
    assert back.notes == {"cpu.throttled": "CPU speed limited"}
    assert back == sample


def test_hostile_values_read_back_as_missing() -> None:
    data = {"t": 1.0, "readings": {"a": {"value": True}, "b": {"value": "9"}, "c": 3}}
    back = lenient_sample(data)
    assert back.value("a") is None and back.value("b") is None
    assert "c" not in back.readings
