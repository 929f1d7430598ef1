"""Calibration progress for tests that do not look at what a calibration says."""

from __future__ import annotations

from collections.abc import Callable

from vibey_gh.interfaces.slots_interface import MemorySample
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.measurement.progress_lines import SweepPlan


class Quiet:
    """A CalibrationProgress that says nothing."""

    def message(self, text: str) -> None:
        pass

    def sweep_started(self, plan: SweepPlan) -> None:
        pass

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        pass

    def runner_ready(self, load_seconds: float | None) -> None:
        pass

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        pass

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        pass


class Recorder:
    """A CalibrationProgress that remembers what it was told, and runs hooks at each turn."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.started: list[tuple[int, int, int]] = []  # (index, slots, attempt)
        self.finished: list[tuple[int, int, str]] = []  # (index, slots, verdict label)
        self.turn_hook: list[Callable[[int], None]] = []  # called with the turns done so far
        self.plans: list[SweepPlan] = []

    def message(self, text: str) -> None:
        self.messages.append(text)

    def sweep_started(self, plan: SweepPlan) -> None:
        self.plans.append(plan)

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        self.started.append((index, slots, attempt))

    def runner_ready(self, load_seconds: float | None) -> None:
        pass

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        for hook in self.turn_hook:
            hook(done)

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        self.finished.append((step.index, step.slots, verdict_label))
