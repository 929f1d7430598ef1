"""Calibration progress for tests that do not look at what a calibration says."""

from __future__ import annotations

from vibey_gh.interfaces.slots_interface import MemorySample
from vibey_gh.slots.records import StepRecord


class Quiet:
    """A CalibrationProgress that says nothing."""

    def message(self, text: str) -> None:
        pass

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        pass

    def runner_ready(self, load_seconds: float | None) -> None:
        pass

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        pass

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        pass
