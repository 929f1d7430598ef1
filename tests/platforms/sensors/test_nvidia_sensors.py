"""NVIDIA temperature, power, clocks and throttle reasons from nvidia-smi's recorded CSV."""

from __future__ import annotations

from collections.abc import Callable

from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.platforms.sensors.nvidia_sensors import (
    NVIDIA_SMI_SENSORS,
    NvidiaSmiSensors,
    parse_sensor_csv,
    slowing_reasons,
)


def test_two_gpus_one_at_its_power_cap(fixture: Callable[[str], str]) -> None:
    report = parse_sensor_csv(fixture("nvidia_smi_sensors_2gpu_power_cap.txt"))
    readings = report.readings
    assert readings["gpu0.temperature_c"].value == 71.0
    assert readings["gpu0.power_w"].value == 612.48
    assert readings["gpu0.power_limit_w"].value == 700.0
    assert readings["gpu0.sm_clock_mhz"].value == 1980.0
    assert readings["gpu0.throttled"].value == 0.0
    assert readings["gpu1.throttled"].value == 1.0
    assert report.notes == {"gpu1.throttled": "sw_power_cap"}


def test_an_idle_gpu_is_not_throttled(fixture: Callable[[str], str]) -> None:
    report = parse_sensor_csv(fixture("nvidia_smi_sensors_idle.txt"))
    assert report.readings["gpu0.throttled"].value == 0.0
    assert report.notes == {}


def test_heat_names_both_thermal_slowdowns(fixture: Callable[[str], str]) -> None:
    report = parse_sensor_csv(fixture("nvidia_smi_sensors_thermal.txt"))
    assert report.notes["gpu0.throttled"] == "sw_thermal_slowdown, hw_thermal_slowdown"


def test_fields_a_gpu_does_not_report_are_missing_with_what_it_printed(
    fixture: Callable[[str], str],
) -> None:
    readings = parse_sensor_csv(fixture("nvidia_smi_sensors_na.txt")).readings
    assert readings["gpu0.temperature_c"].value == 52.0
    assert readings["gpu0.power_w"].value is None
    assert readings["gpu0.power_w"].reason == "nvidia-smi printed '[N/A]'"
    assert readings["gpu0.throttled"].value is None
    assert "[Not Supported]" in (readings["gpu0.throttled"].reason or "")


def test_only_reasons_that_slow_a_busy_gpu_count() -> None:
    assert slowing_reasons(0x1 | 0x2 | 0x10 | 0x100) == []
    assert slowing_reasons(0x8 | 0x80) == ["hw_slowdown", "hw_power_brake_slowdown"]


def test_no_tool_is_one_missing_reading_and_is_not_looked_for_again() -> None:
    run = CannedCommandRunner({})
    sensors = NvidiaSmiSensors(run)
    first, second = sensors.read(), sensors.read()
    assert first.readings["gpu.sensors"].reason == "nvidia-smi not found"
    assert second.readings["gpu.sensors"].reason == "nvidia-smi not found"
    assert run.calls == [NVIDIA_SMI_SENSORS]


def test_the_query_runs_through_the_command_runner(fixture: Callable[[str], str]) -> None:
    run = CannedCommandRunner({NVIDIA_SMI_SENSORS: (0, fixture("nvidia_smi_sensors_idle.txt"))})
    assert NvidiaSmiSensors(run).read().readings["gpu0.power_w"].value == 61.02
