"""A calibration's progress as plain lines, for logs, CI and the storm's own log."""

from __future__ import annotations

import time
from collections.abc import Callable

from ...interfaces.slots_interface import MemorySample
from ..judging.records import StepRecord


def memory_text(sample: MemorySample | None) -> str:
    if sample is None or sample.wired_bytes is None:
        return "memory —"
    free = "" if sample.free_share is None else f", free {sample.free_share:.0%}"
    return f"wired {sample.wired_bytes / 1e9:.2f} GB{free}"


class LineProgress:
    """One line per step event; turn counts at most every `every_s` seconds and at the end."""

    def __init__(self, write: Callable[[str], None], every_s: float = 10.0) -> None:
        self._write = write
        self._every_s = every_s
        self._turns = 0
        self._last_line = 0.0

    def message(self, text: str) -> None:
        self._write(text)

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        self._turns = turns
        again = f" (attempt {attempt})" if attempt > 1 else ""
        self.message(f"step {index}: N={slots}{again}, {turns} turns")

    def runner_ready(self, load_seconds: float | None) -> None:
        if load_seconds is not None:
            self.message(f"  runner ready, model loaded in {load_seconds:.1f}s")

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        now = time.monotonic()
        if done == self._turns or now - self._last_line >= self._every_s:
            self._last_line = now
            self.message(f"  {done}/{self._turns} turns, {served} served, {memory_text(latest)}")

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        early = f" (ended early: {step.ended_early})" if step.ended_early else ""
        self.message(f"  step {step.index} N={step.slots}: {verdict_label}{early}")

    def close(self) -> None:
        return None
