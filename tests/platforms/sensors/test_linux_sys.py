"""Thermal zones and CPU frequency from a /sys tree built as the kernel lays it out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vibey_gh.platforms.sensors.linux_sys import LinuxSysSensors, reading_name

MachineTree = Callable[..., Path]


def test_zones_are_named_by_their_type_in_degrees_with_what_they_mean(
    machine: MachineTree,
) -> None:
    root = machine({
        "/sys/class/thermal/thermal_zone0/type": "acpitz\n",
        "/sys/class/thermal/thermal_zone0/temp": "27800\n",
        "/sys/class/thermal/thermal_zone1/type": "x86_pkg_temp\n",
        "/sys/class/thermal/thermal_zone1/temp": "64000\n",
        "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq": "2400000\n",
        "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": "3500000\n",
        "/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq": "1200000\n",
        "/sys/devices/system/cpu/cpu1/cpufreq/cpuinfo_max_freq": "3500000\n",
    })  # fmt: skip
    readings = LinuxSysSensors(root).read().readings
    assert readings["thermal.x86_pkg_temp_c"].value == 64.0
    assert readings["thermal.x86_pkg_temp_c"].meaning == "the CPU package (Intel)"
    assert readings["thermal.acpitz_c"].value == 27.8
    assert readings["cpu.freq_mhz"].value == 1800.0
    assert readings["cpu.max_freq_mhz"].value == 3500.0


def test_an_unreadable_zone_is_missing_with_what_it_held(machine: MachineTree) -> None:
    root = machine({
        "/sys/class/thermal/thermal_zone3/type": "iwlwifi_1\n",
        "/sys/class/thermal/thermal_zone3/temp": "N/A\n",
    })  # fmt: skip
    reading = LinuxSysSensors(root).read().readings["thermal.iwlwifi_1_c"]
    assert reading.value is None
    assert reading.reason is not None and "'N/A'" in reading.reason
    assert reading.meaning == "the Wi-Fi adapter"


def test_a_machine_without_sensors_says_so_for_each_reading(machine: MachineTree) -> None:
    readings = LinuxSysSensors(machine({})).read().readings
    assert readings["thermal.zones"].value is None
    assert "no thermal_zone" in (readings["thermal.zones"].reason or "")
    assert readings["cpu.freq_mhz"].value is None
    assert "cpufreq is absent" in (readings["cpu.freq_mhz"].reason or "")


def test_a_type_seen_twice_keeps_its_zone_number() -> None:
    first = reading_name("acpitz", 0, set())
    assert first == "thermal.acpitz_c"
    assert reading_name("acpitz", 4, {first}) == "thermal.acpitz4_c"
    assert reading_name("INT3400 Thermal", 2, set()) == "thermal.int3400_thermal_c"
