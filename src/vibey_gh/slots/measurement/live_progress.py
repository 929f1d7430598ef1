"""Progress for long work: a live table on a terminal, plain lines otherwise.

Both go to stderr, so `--json` on stdout stays clean. The live view (rich's Live) redraws in
place: the steps measured so far with their throughput, its interval and their verdicts, the
running step against what will end it (its minimum measured, every corpus turn served once,
its maximum), its expected time, and the sweep's time left. Lines that are not progress (a
resumed checkpoint, a discarded step, a finished step) are printed above it, as the plain
lines say them, so what scrolled away is still there. Off a terminal (a log, CI) only the
plain lines are written.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ...interfaces.slots_interface import MemorySample
from ..judging.metrics import step_metrics
from ..judging.records import StepRecord
from .progress_lines import LineProgress, SweepPlan, duration_text, memory_text

CONFIDENCE = 0.9  # the interval shown while the sweep runs (the evidence states its own)
REDRAW_EVERY_S = 0.25  # a step may serve dozens of turns a second: redraw at most this often


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class PlainProgress(LineProgress):
    """One line per event on stderr: readable in logs and CI."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(_to_stderr, clock=clock)


def _short(value: float) -> str:
    return f"{value / 1000:.1f}k" if value >= 10_000 else f"{value:,.0f}"


class LiveProgress(PlainProgress):
    """A live table of the sweep on stderr, redrawn as turns come in."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, console: Console | None = None
    ) -> None:
        super().__init__(clock)
        self._console = Console(stderr=True) if console is None else console
        self._rows: list[tuple[str, str, str, str, str, str]] = []
        self._running: tuple[int, int, int] | None = None  # index, slots, attempt
        self._detail = ""
        self._left_at_start: tuple[float, float] | None = None
        self._figure = "turns/h"
        self._drawn_at = -REDRAW_EVERY_S
        # stdout is the command's own (`--json`): the live view never takes it over
        self._live = Live(
            self.renderable(),
            console=self._console,
            transient=False,
            auto_refresh=False,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def message(self, text: str) -> None:
        self._live.console.print(text, markup=False, highlight=False)

    def _refresh(self) -> None:
        self._live.update(self.renderable(), refresh=True)

    def sweep_started(self, plan: SweepPlan) -> None:
        super().sweep_started(plan)
        self._refresh()

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        LineProgress.step_started(self, index, slots, attempt, turns)
        self._running = (index, slots, attempt)
        self._detail = "starting the runner"
        self._left_at_start = self.time_left()
        self._refresh()

    def runner_ready(self, load_seconds: float | None) -> None:
        super().runner_ready(load_seconds)
        self._detail = "" if load_seconds is None else f"model loaded in {load_seconds:.1f}s"
        self._refresh()

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        now = self._clock()
        if now - self._drawn_at >= REDRAW_EVERY_S:
            self._drawn_at = now
            self._detail = f"{self.step_detail(done, served)}, {memory_text(latest)}"
            self._refresh()

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        took = self._clock() - self._step_started
        super().step_finished(step, verdict_label)
        metrics = step_metrics(step)
        self._figure = metrics.decided_by
        low, high = metrics.interval(CONFIDENCE)
        rate = _short(metrics.rate)
        if metrics.has_interval:
            rate += f" ({_short(low)}–{_short(high)})"
        served = sum(1 for turn in step.turns if turn.result.served)
        self._rows.append(
            (
                str(step.index),
                str(step.slots),
                str(served),
                rate,
                verdict_label + (" (ended early)" if step.ended_early else ""),
                duration_text(took),
            )
        )
        self._running = None
        self._refresh()

    def renderable(self) -> RenderableType:
        """The sweep as it stands: the steps measured, the running step, the time left."""
        if self._plan is None and self._running is None and not self._rows:
            return Text("")  # no sweep (a soak): its lines are all it says
        table = Table(title=self._title(), title_justify="left", expand=False)
        for header in ("step", "N", "turns served", f"{self._figure} ({CONFIDENCE:.0%})"):
            table.add_column(header, justify="right")
        table.add_column("verdict")
        table.add_column("took", justify="right")
        for row in self._rows:
            table.add_row(*row)
        parts: list[RenderableType] = [table]
        if self._running is not None:
            index, slots, attempt = self._running
            again = f" (attempt {attempt})" if attempt > 1 else ""
            parts.append(Text(f"step {index} N={slots}{again}: {self.step_estimate_text()}"))
            if self._detail:
                parts.append(Text(f"  {self._detail}"))
        left = self._left_text()
        if left:
            parts.append(Text(left))
        return Group(*parts)

    def _title(self) -> str:
        if self._plan is None:
            return "sweep"
        return f"sweep {self._plan.order_text()}: {self._done} of at most {self._plan.most_steps}"

    def _left_text(self) -> str:
        """The sweep's time left, less what the running step has taken so far."""
        left = self._left_at_start if self._running is not None else self.time_left()
        if left is None or left[1] <= 0:
            return ""
        spent = self._clock() - self._step_started if self._running is not None else 0.0
        low, high = (max(0.0, end - spent) for end in left)
        if duration_text(low) == duration_text(high):
            return f"sweep time left about {duration_text(high)}"
        return f"sweep time left {duration_text(low)}–{duration_text(high)}"

    def close(self) -> None:
        self._live.stop()


def make_progress(live: bool) -> PlainProgress:
    return LiveProgress() if live else PlainProgress()


__all__ = ["LiveProgress", "PlainProgress", "make_progress"]
