"""A calibration's progress as plain lines, for logs, CI and the storm's own log.

What it says is true of a steady-state step: a step is measured for a time, not for one pass
over the corpus, so its progress is the seconds replayed against the step's minimum and
maximum and the turns served (thousands, where the corpus holds a few dozen), never "turns
done of corpus turns". A step also runs until every corpus turn has been answered once, so a
slow pass can hold it past its maximum: the line then says that the pass is what holds it
("held for one pass: 41/60 turns"). Each step's line says how long it is expected to take,
and the sweep's how long it has left, from the steps measured so far (`estimates`), each with
the range the step's rule allows (to its cap at most, or its pass): at least the steps the
patience rule still needs (fewer only if a step breaks a bound), at most every step it may
take, the closing one-slot run included. Before the first step nothing is measured, and the
line says what will end the step instead of guessing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec

from ...interfaces.slots_interface import MemorySample
from ..judging.records import StepRecord
from ..judging.runs import RUNS, figure_of, replayed_runs
from .estimates import (
    MeasuredStep,
    StepEstimate,
    estimate_step,
    measured_step,
    steps_ahead,
    sweep_left,
)


def memory_text(sample: MemorySample | None) -> str:
    if sample is None or sample.wired_bytes is None:
        return "memory —"
    free = "" if sample.free_share is None else f", free {sample.free_share:.0%}"
    return f"wired {sample.wired_bytes / 1e9:.2f} GB{free}"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """ "1 turn", "2 turns": a count with its noun in the right number."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def duration_text(seconds: float) -> str:
    """A short, rounded duration: 0.5 s, 45 s, 2.2 min, 12 min, 3.5 h (tenths of a minute
    below ten minutes, where a step's estimate is read against its real time)."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 600:
        return f"{round(seconds / 60, 1):g} min"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class SweepPlan(msgspec.Struct, frozen=True):
    """What a sweep knows about its own length before its next step.

    explicit: the `--slots` list (None: 1, 1, 2, 3, … up to `max_slots`). done: steps already
    measured (resumed ones included). min_step_s / max_step_s: how long one step is measured,
    at least and at most. measured: the resumed steps' figures, for the estimates. patience:
    steps without a gain that stop it. reference_passes: with `latency_factor` set, how many
    times each one-slot run before the steps serves every turn (the reference its slowdowns
    are judged against); None without it. closing: the sweep closes with one slot again (its
    steps do not interleave). one_pass_runs: its one-slot runs end once they served the
    corpus (its steps interleave, and no latency reference holds them)."""

    explicit: tuple[int, ...] | None
    max_slots: int
    done: int
    min_step_s: float
    max_step_s: float
    measured: tuple[MeasuredStep, ...] = ()
    patience: int = 2
    reference_passes: int | None = None
    # the sweep closes with one slot again (its steps do not interleave)
    closing: bool = True
    one_pass_runs: bool = False
    # where a step's planned looks start doubling to the cap (None: evenly spaced to it)
    even_looks_s: float | None = None
    # a step above one slot's first look, before the minimum: its steps interleave
    # (`sequential.first_look`); None: at the minimum
    first_look_s: float | None = None

    @property
    def most_steps(self) -> int:
        """An explicit list as given; else 1, 1, 2, … up to max_slots and the closing one-slot
        run that checks for drift (`judging.sweep.sweep_steps`)."""
        if self.explicit is not None:
            return len(self.explicit)
        return self.max_slots + (2 if self.closing else 1)

    def slots_at(self, index: int) -> int:
        if self.explicit is not None:
            return self.explicit[min(index, len(self.explicit) - 1)]
        return 1 if index < 2 else index

    def order_text(self) -> str:
        if self.explicit is not None:
            return "N = " + ", ".join(str(n) for n in self.explicit)
        again = ", then 1 again" if self.closing else ", each against one slot in its own blocks"
        return f"N = 1, 1, 2, 3, … up to {self.max_slots}{again}"


# verdicts that may count towards the patience rule
NO_GAIN_LABELS = ("no gain", "inconclusive")


def measured_of(steps: list[StepRecord]) -> tuple[MeasuredStep, ...]:
    """Resumed steps' figures for the estimates (their whole time as the records say)."""
    figures = (measured_step(step, step.ended_at - step.started_at) for step in steps)
    return tuple(f for f in figures if f is not None)


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
        self._measured: list[MeasuredStep] = []
        self._streak = 0  # the latest steps above one slot that gained nothing (patience)
        self._slots = 1
        self._running_slots: int | None = None  # the step running now (None: between steps)

    def message(self, text: str) -> None:
        self._write(text)

    def sweep_started(self, plan: SweepPlan) -> None:
        self._plan, self._done = plan, plan.done
        self._measured = list(plan.measured)
        resumed = f"; {counted(plan.done, 'step')} already measured" if plan.done else ""
        sooner = (
            f" (an interleaved one from {duration_text(plan.first_look_s)})"
            if plan.first_look_s is not None
            else ""
        )
        self.message(
            f"sweep: {plan.order_text()}; a step serves every corpus turn once and measures "
            f"{duration_text(plan.min_step_s)}–{duration_text(plan.max_step_s)}{sooner}{resumed}"
        )

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        self._corpus_turns = turns
        self._replay_started = None
        self._step_started = self._clock()
        self._slots = self._running_slots = slots
        again = f" (attempt {attempt})" if attempt > 1 else ""
        self.message(
            f"step {self.step_position(index)}: N={slots}{again}; "
            f"{self.step_estimate_text()}{self.time_left_text()}"
        )

    def step_position(self, index: int) -> str:
        if self._plan is None:
            return str(index)
        return f"{index} ({index + 1} of at most {self._plan.most_steps})"

    def step_estimate(self, slots: int) -> StepEstimate | None:
        """How long a step at `slots` is expected to take (None before the first step)."""
        if self._plan is None:
            return None
        plan = self._plan
        one_pass = plan.one_pass_runs and slots <= 1
        return estimate_step(
            self._measured,
            slots,
            plan.min_step_s,
            plan.max_step_s,
            self._passes(slots),
            one_pass,
            plan.even_looks_s,
            plan.first_look_s,
        )

    def _passes(self, slots: int) -> int | None:
        """What the step at `slots` must hold of every turn (`estimate_step`'s `passes`): a
        one-slot run before any larger step is the reference, one after it stops at its first
        look."""
        if self._plan is None or self._plan.reference_passes is None or slots > 1:
            return None
        if any(m.slots > 1 for m in self._measured):
            return 1
        return self._plan.reference_passes

    def step_estimate_text(self) -> str:
        """How long the running step is expected to take, or what will end it."""
        if self._plan is None:
            return ""
        estimate = self.step_estimate(self._slots)
        if estimate is None:
            turns = counted(self._corpus_turns, "corpus turn")
            passes = self._passes(self._slots)
            times = (
                f"{passes} times (the reference latency_factor is judged against)"
                if passes is not None and passes > 1
                else "once"
            )
            if self._plan.one_pass_runs and self._slots <= 1:
                return f"until each of its {turns} was served once (no step's bar)"
            return (
                f"at least {duration_text(self._plan.min_step_s)}, until each of its {turns} "
                f"was served {times}"
            )
        notes = []
        if estimate.high - estimate.low > 0.1 * estimate.likely:
            notes.append(f"{duration_text(estimate.low)}–{duration_text(estimate.high)}")
        if estimate.pass_held:
            notes.append("one pass over the corpus holds it")
        said = f" ({'; '.join(notes)})" if notes else ""
        return f"about {duration_text(estimate.likely)}{said}"

    def time_left(self) -> tuple[float, float] | None:
        """Seconds the sweep has left from the start of the running step (None: unknown)."""
        if self._plan is None:
            return None
        plan = self._plan
        ahead = steps_ahead(
            plan.explicit,
            plan.max_slots,
            self._done,
            plan.patience,
            self._streak,
            running=self._running_slots,
            closes=plan.closing,
        )
        return sweep_left(
            self._measured,
            ahead,
            plan.min_step_s,
            plan.max_step_s,
            plan.reference_passes,
            plan.one_pass_runs,
            plan.even_looks_s,
            plan.first_look_s,
        )

    def time_left_text(self) -> str:
        left = self.time_left()
        if left is None or left[1] <= 0:
            return ""
        low, high = left
        if duration_text(low) == duration_text(high):
            return f"; sweep time left about {duration_text(high)}"
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
            least = self._plan.min_step_s
            if self._plan.first_look_s is not None and self._slots > 1:
                least = min(least, self._plan.first_look_s)
            bounds = f" (min {least:g}, max {self._plan.max_step_s:g}{held})"
        return f"{seconds:.0f} s replayed{bounds}, {counted(served, 'turn')} served{corpus}"

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        now = self._clock()
        if now - self._last_line >= self._every_s:
            self._last_line = now
            self.message(f"  {self.step_detail(done, served)}, {memory_text(latest)}")

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        self._done += 1
        self._running_slots = None
        took_s = self._clock() - self._step_started
        figures = measured_step(step, took_s)
        if figures is not None:
            self._measured.append(figures)
        if step.slots > 1:
            # a step that qualified may still have gained nothing over the best so far: only
            # "no gain" and "inconclusive" are counted, so the low end is never too low
            self._streak = self._streak + 1 if verdict_label in NO_GAIN_LABELS else 0
        took = duration_text(took_s)
        early = f" (ended early: {step.ended_early})" if step.ended_early else ""
        served = sum(1 for turn in step.turns if turn.result.served)
        runs = ""
        if figure_of(step.shape) == RUNS:
            completed = sum(1 for run in replayed_runs(step.turns) if run.served)
            runs = f" ({counted(completed, 'whole run')} completed)"
        self.message(
            f"  step {step.index} N={step.slots}: {verdict_label}{early} — "
            f"{counted(served, 'turn')} served{runs} in {took}"
        )

    def close(self) -> None:
        return None


__all__ = [
    "LineProgress",
    "SweepPlan",
    "counted",
    "duration_text",
    "measured_of",
    "memory_text",
]
