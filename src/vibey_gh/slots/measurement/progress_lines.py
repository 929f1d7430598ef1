"""A calibration's progress as plain lines, for logs, CI and the storm's own log.

What it says is true of a steady-state step: a step is measured for a time, not for one pass
over the corpus, so its progress is the seconds replayed against the step's minimum and
maximum and the turns served (thousands, where the corpus holds a few dozen), never "turns
done of corpus turns". A step also runs until every corpus turn has been answered once, so a
slow pass can hold it past its maximum: the line then says that the pass is what holds it
("held for one pass: 41/60 turns"). The sweep's progress is the steps done of the most it
may take and a range for the time left: the sweep may stop after the next step (a broken
bound, no gain) or run every step to its cap (or as long as the longest step so far).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...interfaces.slots_interface import MemorySample
from ...interfaces.values import frozen_value
from ..judging.records import StepRecord
from ..judging.runs import RUNS, figure_of, replayed_runs


def memory_text(sample: MemorySample | None) -> str:
    if sample is None or sample.wired_bytes is None:
        return "memory —"
    free = "" if sample.free_share is None else f", free {sample.free_share:.0%}"
    return f"wired {sample.wired_bytes / 1e9:.2f} GB{free}"


def duration_text(seconds: float) -> str:
    """A short, rounded duration: 0.5 s, 45 s, 12 min, 3.5 h."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@frozen_value
class SweepPlan:
    """What a sweep knows about its own length before its next step.

    explicit: the `--slots` list (None: 1, 1, 2, 3, … up to `max_slots`). done: steps already
    measured (resumed ones included). min_step_s / max_step_s: how long one step is measured,
    at least and at most. overhead_s: seconds a step spends outside its measurement (runner
    start, model load, drain), as measured so far (0 before the first step)."""

    explicit: tuple[int, ...] | None
    max_slots: int
    done: int
    min_step_s: float
    max_step_s: float
    overhead_s: float = 0.0

    @property
    def most_steps(self) -> int:
        return len(self.explicit) if self.explicit is not None else self.max_slots + 1

    def time_left(
        self, done: int, overhead_s: float | None = None, longest_step_s: float = 0.0
    ) -> tuple[float, float]:
        """Seconds left, at least (the sweep stops after the next step, measured for its
        minimum) and at most (every step left runs to its cap, or as long as the longest
        step so far, `longest_step_s`, when one pass over the corpus held a step past its
        cap); `overhead_s` as measured now (default: as planned)."""
        left = max(0, self.most_steps - done)
        if left == 0:
            return 0.0, 0.0
        extra = self.overhead_s if overhead_s is None else overhead_s
        longest = max(self.max_step_s, longest_step_s)
        return self.min_step_s + extra, left * (longest + extra)

    def order_text(self) -> str:
        if self.explicit is not None:
            return "N = " + ", ".join(str(n) for n in self.explicit)
        return f"N = 1, 1, 2, 3, … up to {self.max_slots}"


def overhead_of(steps: list[StepRecord]) -> float:
    """Mean seconds per step outside the measurement window (start, load, ramp, drain)."""
    spans = [span for span in map(_overhead, steps) if span is not None]
    return sum(spans) / len(spans) if spans else 0.0


def _overhead(step: StepRecord) -> float | None:
    measured = _measured_seconds(step)
    if measured is None:
        return None
    return max(0.0, (step.ended_at - step.started_at) - measured)


def _measured_seconds(step: StepRecord) -> float | None:
    measurement = step.measurement or {}
    start, end = measurement.get("start"), measurement.get("end")
    if isinstance(start, int | float) and isinstance(end, int | float):
        return float(end) - float(start)
    return None


class LineProgress:
    """One line per event; within a step, a line at most every `every_s` seconds."""

    def __init__(
        self,
        write: Callable[[str], None],
        every_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write = write
        self._clock = clock
        self._every_s = every_s
        self._last_line = 0.0
        self._plan: SweepPlan | None = None
        self._done = 0
        self._corpus_turns = 0
        self._replay_started: float | None = None
        self._step_started = 0.0
        self._overheads: list[float] = []
        self._longest_step_s = 0.0  # the longest measurement window so far

    def message(self, text: str) -> None:
        self._write(text)

    def sweep_started(self, plan: SweepPlan) -> None:
        self._plan, self._done = plan, plan.done
        if plan.done:
            self._overheads = [plan.overhead_s]
        resumed = f"; {plan.done} step(s) already measured" if plan.done else ""
        self.message(
            f"sweep: {plan.order_text()}; each step measured "
            f"{duration_text(plan.min_step_s)}–{duration_text(plan.max_step_s)}{resumed}"
        )

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        self._corpus_turns = turns
        self._replay_started = None
        self._step_started = self._clock()
        again = f" (attempt {attempt})" if attempt > 1 else ""
        self.message(f"step {self.step_position(index)}: N={slots}{again}{self.time_left_text()}")

    def step_position(self, index: int) -> str:
        if self._plan is None:
            return str(index)
        return f"{index} ({index + 1} of at most {self._plan.most_steps})"

    def time_left_text(self) -> str:
        if self._plan is None:
            return ""
        overhead = sum(self._overheads) / len(self._overheads) if self._overheads else None
        low, high = self._plan.time_left(self._done, overhead, self._longest_step_s)
        if high <= 0:
            return ""
        return f"; sweep time left {duration_text(low)}–{duration_text(high)}"

    def runner_ready(self, load_seconds: float | None) -> None:
        self._replay_started = self._clock()
        if load_seconds is not None:
            self.message(f"  runner ready, model loaded in {load_seconds:.1f}s")

    def replayed_seconds(self) -> float:
        return 0.0 if self._replay_started is None else self._clock() - self._replay_started

    def step_detail(self, done: int, served: int) -> str:
        """Seconds replayed against the step's bounds, turns served, the corpus covered.

        done: corpus turns answered at least once. Past the step's maximum with the corpus
        not yet covered, the bounds say that the one pass is what holds the step."""
        seconds = self.replayed_seconds()
        covered = min(done, self._corpus_turns)
        corpus = f", corpus {covered}/{self._corpus_turns} once"
        bounds = ""
        if self._plan is not None:
            held = ""
            if seconds > self._plan.max_step_s and covered < self._corpus_turns:
                held = f"; held for one pass: {covered}/{self._corpus_turns} turns"
                corpus = ""
            bounds = f" (min {self._plan.min_step_s:g}, max {self._plan.max_step_s:g}{held})"
        return f"{seconds:.0f} s replayed{bounds}, {served} turns served{corpus}"

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        now = self._clock()
        if now - self._last_line >= self._every_s:
            self._last_line = now
            self.message(f"  {self.step_detail(done, served)}, {memory_text(latest)}")

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        self._done += 1
        took_s = self._clock() - self._step_started
        measured = _measured_seconds(step)
        if measured is not None:  # the runner's start and the model's load included
            self._overheads.append(max(0.0, took_s - measured))
            self._longest_step_s = max(self._longest_step_s, measured)
        took = duration_text(took_s)
        early = f" (ended early: {step.ended_early})" if step.ended_early else ""
        served = sum(1 for turn in step.turns if turn.result.served)
        runs = ""
        if figure_of(step.shape) == RUNS:
            completed = sum(1 for run in replayed_runs(step.turns) if run.served)
            runs = f" ({completed} whole runs completed)"
        self.message(
            f"  step {step.index} N={step.slots}: {verdict_label}{early} — {served} turns "
            f"served{runs} in {took}"
        )

    def close(self) -> None:
        return None


__all__ = ["LineProgress", "SweepPlan", "duration_text", "memory_text", "overhead_of"]
