"""macOS thermal state without root: `pmset -g therm`.

pmset prints what the power manager last recorded: "Note: No thermal warning level has been
recorded" (nominal) or a line naming the thermal warning level, the same for the performance
warning level, and, where the CPU power status is recorded (Intel Macs), an indented block
`CPU_Scheduler_Limit = 100`, `CPU_Available_CPUs = 8`, `CPU_Speed_Limit = 100`: the share of
full speed the CPU may run at. A speed limit under 100, or a warning level above 0, is
throttling. Apple silicon records no CPU power status: those readings are None with why.
"""

from __future__ import annotations

import re

from ...interfaces.readings import Reading, SensorReport, missing
from ...interfaces.slots_interface import CommandRunner
from ..process.commands import read_output

PMSET_THERM: tuple[str, ...] = ("pmset", "-g", "therm")
_KEY_VALUE = re.compile(r"^\s*(CPU_[A-Za-z_]+)\s*=\s*(\d+)\s*$")
_LEVEL = re.compile(r"(thermal|performance) warning level\D*?(\d+)", re.IGNORECASE)
_NONE_RECORDED = re.compile(r"no (thermal|performance) warning level has been recorded", re.I)
NO_CPU_STATUS = "pmset records no CPU power status here (Apple silicon reports none)"


def parse_pmset_therm(text: str) -> SensorReport:
    values: dict[str, int] = {}
    levels: dict[str, int] = {}
    for line in text.splitlines():
        if (pair := _KEY_VALUE.match(line)) is not None:
            values[pair.group(1)] = int(pair.group(2))
        elif (nothing := _NONE_RECORDED.search(line)) is not None:
            levels[nothing.group(1).lower()] = 0
        elif (level := _LEVEL.search(line)) is not None:
            levels[level.group(1).lower()] = int(level.group(2))
    readings: dict[str, Reading] = {}
    for name, key, meaning in (
        ("cpu.speed_limit_pct", "CPU_Speed_Limit", "share of full CPU speed allowed"),
        ("cpu.scheduler_limit_pct", "CPU_Scheduler_Limit", "share of CPU time scheduled"),
    ):
        limit = values.get(key)
        readings[name] = (
            Reading(float(limit), "%", None, meaning)
            if limit is not None
            else missing(NO_CPU_STATUS, "%")
        )
    for kind in ("thermal", "performance"):
        recorded = levels.get(kind)
        readings[f"{kind}.warning_level"] = (
            Reading(float(recorded), "", None, f"{kind} warning level (0: nominal)")
            if recorded is not None
            else missing(f"pmset printed no {kind} warning level")
        )
    reasons = [
        label
        for label, on in (
            ("CPU speed limited", values.get("CPU_Speed_Limit", 100) < 100),
            ("CPU scheduler limited", values.get("CPU_Scheduler_Limit", 100) < 100),
            ("thermal warning", levels.get("thermal", 0) > 0),
            ("performance warning", levels.get("performance", 0) > 0),
        )
        if on
    ]
    known = bool(values) or bool(levels)
    readings["cpu.throttled"] = (
        Reading(1.0 if reasons else 0.0) if known else missing("pmset printed nothing it knows")
    )
    return SensorReport(readings, {"cpu.throttled": ", ".join(reasons)} if reasons else {})


class PmsetThermSensors:
    """`pmset -g therm` once per tick (a few milliseconds; no root)."""

    def __init__(self, run: CommandRunner) -> None:
        self.run = run

    def read(self) -> SensorReport:
        text, reason = read_output(self.run, PMSET_THERM)
        if text is None:
            why = reason or "pmset printed nothing"
            names = ("cpu.speed_limit_pct", "thermal.warning_level", "cpu.throttled")
            return SensorReport({name: missing(why) for name in names})
        return parse_pmset_therm(text)
