"""NVIDIA's sensors through NVML (a stand-in library with pynvml's names), nvidia-smi when NVML
cannot start, nothing when no driver is loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vibey_gh.platforms.nvidia import NoNvidiaDriver, NvmlGpus
from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.platforms.sensors.combined import sensors_for
from vibey_gh.platforms.sensors.nvidia_sensors import (
    NVIDIA_SMI_SENSORS,
    NvidiaSmiSensors,
    NvmlSensors,
)

GIB = 1 << 30


def sensing(base: type) -> type:
    class SensingNvml(base):  # type: ignore[misc, valid-type]
        """pynvml's sensor calls: °C, milliwatts, MHz and the clocks event reasons bitmask."""

        def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
            assert sensor == 0  # NVML_TEMPERATURE_GPU
            return [66, 83][handle]

        def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
            if handle == 1:
                raise self.NVMLError("Not Supported")
            return 412_500

        def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:
            return 450_000

        def nvmlDeviceGetClockInfo(self, handle: int, clock: int) -> int:
            assert clock == 1  # NVML_CLOCK_SM
            return 2520

        def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: int) -> int:
            return [0x1, 0x20 | 0x40][handle]

    return SensingNvml


def test_nvml_reads_each_gpu_and_names_what_slows_it(fake_nvml: Any) -> None:
    library = sensing(fake_nvml)([("RTX 4090", 24 * GIB, GIB), ("RTX 4090", 24 * GIB, GIB)])
    run = CannedCommandRunner({})
    report = NvmlSensors(NvmlGpus(library), NvidiaSmiSensors(run)).read()
    readings = report.readings
    assert readings["gpu0.temperature_c"].value == 66.0
    assert readings["gpu0.power_w"].value == 412.5
    assert readings["gpu0.power_limit_w"].value == 450.0
    assert readings["gpu0.sm_clock_mhz"].value == 2520.0
    assert readings["gpu0.throttled"].value == 0.0, "idle costs nothing"
    assert readings["gpu1.power_w"].value is None
    assert readings["gpu1.power_w"].reason == "NVML: Not Supported"
    assert report.notes == {"gpu1.throttled": "sw_thermal_slowdown, hw_thermal_slowdown"}
    assert run.calls == [], "no process per tick where NVML answers"


def test_without_nvml_nvidia_smi_answers(fake_nvml: Any, fixture: Any) -> None:
    library = fake_nvml(init_error="Driver Not Loaded")
    run = CannedCommandRunner({NVIDIA_SMI_SENSORS: (0, fixture("nvidia_smi_sensors_idle.txt"))})
    report = NvmlSensors(NvmlGpus(library), NvidiaSmiSensors(run)).read()
    assert report.readings["gpu0.power_w"].value == 61.02
    assert run.calls == [NVIDIA_SMI_SENSORS]


def test_linux_without_a_driver_says_so_and_runs_nothing(tmp_path: Path) -> None:
    run = CannedCommandRunner({})
    sensors = sensors_for("linux", tmp_path, run, NoNvidiaDriver(tmp_path))
    reading = sensors.read().readings["gpu.sensors"]
    assert reading.value is None and "no NVIDIA driver loaded" in (reading.reason or "")
    assert run.calls == []


def test_other_platforms_have_no_sensor_and_say_so(tmp_path: Path) -> None:
    reading = sensors_for("win32", tmp_path, CannedCommandRunner({})).read().readings["sensors"]
    assert reading.reason == "no sensor source on win32"


def _driver_present() -> bool:
    return Path("/proc/driver/nvidia/version").exists()


@pytest.mark.nvidia
@pytest.mark.skipif(not _driver_present(), reason="needs an NVIDIA GPU with its driver")
def test_live_nvml_sensors_read_a_temperature_and_a_power_limit() -> None:
    gpus = NvmlGpus()
    try:
        readings = NvmlSensors(gpus, NvidiaSmiSensors(CannedCommandRunner({}))).read().readings
    finally:
        gpus.close()
    temperature = readings["gpu0.temperature_c"]
    assert temperature.value is not None and 0 < temperature.value < 120, temperature.reason
    assert "gpu0.throttled" in readings
