"""Progress for long work: a live rich display on a terminal, plain lines otherwise.

Both go to stderr, so `--json` on stdout stays clean. The live display has two bars: the
sweep's (steps done of the most it may take, and a range for the time left) and the step's
(seconds replayed against the step's maximum, with its minimum, the turns served and memory
beside it).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from ..interfaces.slots_interface import MemorySample
from ..slots.judging.records import StepRecord
from ..slots.measurement.progress_lines import LineProgress, SweepPlan, memory_text


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class PlainProgress(LineProgress):
    """One line per event on stderr: readable in logs and CI."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(_to_stderr, clock=clock)


class LiveProgress(PlainProgress):
    """A rich bar for the sweep and one per step, on stderr."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, console: Console | None = None
    ) -> None:
        super().__init__(clock)
        self._console = Console(stderr=True) if console is None else console
        self._progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(bar_width=24),
            TextColumn("{task.fields[detail]}", markup=False),
            console=self._console,
            transient=False,
        )
        self._sweep: TaskID | None = None
        self._task: TaskID | None = None
        self._progress.start()

    def message(self, text: str) -> None:
        self._progress.console.print(text, markup=False, highlight=False)

    def sweep_started(self, plan: SweepPlan) -> None:
        super().sweep_started(plan)
        self._sweep = self._progress.add_task(
            "sweep", total=plan.most_steps, completed=plan.done, detail=self._sweep_detail()
        )

    def _sweep_detail(self) -> str:
        if self._plan is None:
            return ""
        return f"{self._done} of at most {self._plan.most_steps} steps{self.time_left_text()}"

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        LineProgress.step_started(self, index, slots, attempt, turns)
        again = f" try {attempt}" if attempt > 1 else ""
        total = self._plan.max_step_s if self._plan is not None else None
        self._task = self._progress.add_task(
            f"step {index} N={slots}{again}", total=total, detail="starting runner"
        )

    def runner_ready(self, load_seconds: float | None) -> None:
        super().runner_ready(load_seconds)
        if self._task is not None:
            loaded = "" if load_seconds is None else f"loaded in {load_seconds:.1f}s"
            self._progress.update(self._task, detail=loaded)

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        if self._task is not None:
            self._progress.update(
                self._task,
                completed=self.replayed_seconds(),
                detail=f"{self.step_detail(done, served)}, {memory_text(latest)}",
            )

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        if self._task is not None:
            done = self._plan.max_step_s if self._plan is not None else None
            self._progress.update(self._task, completed=done, detail=verdict_label)
        super().step_finished(step, verdict_label)
        if self._sweep is not None:
            self._progress.update(self._sweep, completed=self._done, detail=self._sweep_detail())

    def close(self) -> None:
        self._progress.stop()


def make_progress(live: bool) -> PlainProgress:
    return LiveProgress() if live else PlainProgress()
