"""macOS thermal state from `pmset -g therm` in its recorded layouts."""

from __future__ import annotations

from collections.abc import Callable

from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.platforms.sensors.darwin_pmset import (
    NO_CPU_STATUS,
    PMSET_THERM,
    PmsetThermSensors,
    parse_pmset_therm,
)


def test_apple_silicon_records_nothing_and_is_not_throttled(fixture: Callable[[str], str]) -> None:
    report = parse_pmset_therm(fixture("macos_pmset_therm_arm64_nominal.txt"))
    readings = report.readings
    assert readings["thermal.warning_level"].value == 0.0
    assert readings["cpu.throttled"].value == 0.0
    assert readings["cpu.speed_limit_pct"].value is None
    assert readings["cpu.speed_limit_pct"].reason == NO_CPU_STATUS


def test_an_intel_mac_at_full_speed(fixture: Callable[[str], str]) -> None:
    report = parse_pmset_therm(fixture("macos_pmset_therm_x86_64_full_speed.txt"))
    assert report.readings["cpu.speed_limit_pct"].value == 100.0
    assert report.readings["cpu.scheduler_limit_pct"].value == 100.0
    assert report.readings["cpu.throttled"].value == 0.0


def test_a_speed_limit_and_a_warning_level_are_throttling(fixture: Callable[[str], str]) -> None:
    report = parse_pmset_therm(fixture("macos_pmset_therm_x86_64_limited.txt"))
    assert report.readings["cpu.speed_limit_pct"].value == 35.0
    assert report.readings["thermal.warning_level"].value == 1.0
    assert report.readings["cpu.throttled"].value == 1.0
    assert report.notes["cpu.throttled"] == "CPU speed limited, thermal warning"


def test_pmset_missing_or_failing_leaves_readings_missing_with_why() -> None:
    report = PmsetThermSensors(CannedCommandRunner({})).read()
    assert report.readings["cpu.throttled"].value is None
    assert report.readings["cpu.throttled"].reason == "pmset not found"
    failing = PmsetThermSensors(CannedCommandRunner({PMSET_THERM: (1, "")})).read()
    assert "exited 1" in (failing.readings["cpu.speed_limit_pct"].reason or "")
