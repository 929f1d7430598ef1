"""Progress for long work: a live rich display on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from ..interfaces.slots_interface import MemorySample
from ..slots.judging.records import StepRecord
from ..slots.measurement.progress_lines import LineProgress, memory_text


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class PlainProgress(LineProgress):
    """One line per event on stderr: readable in logs and CI."""

    def __init__(self) -> None:
        super().__init__(_to_stderr)


class LiveProgress(PlainProgress):
    """A rich progress bar per step with served turns, live memory and an ETA."""

    def __init__(self) -> None:
        super().__init__()
        self._console = Console(stderr=True)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeRemainingColumn(),
            console=self._console,
            transient=False,
        )
        self._task: TaskID | None = None
        self._progress.start()

    def message(self, text: str) -> None:
        self._progress.console.print(text)

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        again = f" try {attempt}" if attempt > 1 else ""
        self._task = self._progress.add_task(
            f"step {index} N={slots}{again}", total=turns, detail="starting runner"
        )

    def runner_ready(self, load_seconds: float | None) -> None:
        if self._task is not None:
            loaded = "" if load_seconds is None else f"loaded in {load_seconds:.1f}s"
            self._progress.update(self._task, detail=loaded)

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        if self._task is not None:
            self._progress.update(
                self._task, completed=done, detail=f"{served} served, {memory_text(latest)}"
            )

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        if self._task is not None:
            self._progress.update(self._task, detail=verdict_label)
        super().step_finished(step, verdict_label)

    def close(self) -> None:
        self._progress.stop()


def make_progress(live: bool) -> PlainProgress:
    return LiveProgress() if live else PlainProgress()
