"""Measure one step: start the calibration runner with N slots, preload, replay, sample, stop.

The replay runs in a steady state (design §5): at least `min_step_seconds` of measurement
window and every corpus turn once; above one slot, longer (up to `max_step_seconds`) while the
throughput interval cannot yet tell whether the step clears `min_gain` over the bars it is
compared with (the better one-slot run, and the best throughput so far for the patience rule),
or while the p95 interval of a configured latency bound reaches both sides of its limit.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import msgspec
from msgspec.structs import replace

from ....clock import Clock
from ....files import append_line_durably, ensure_private_dir
from ....interfaces.bounds import Bounds
from ....interfaces.readings import SensorSource
from ....interfaces.schema import as_json
from ....interfaces.slots_interface import (
    ChatSettings,
    HostMemorySampler,
    MemorySample,
    RunnerLaunch,
    TurnResult,
)
from ....interfaces.think import ThinkPolicy
from ....runners.contract import ProductionWatch, Runner, RunningRunner
from ...corpus.corpus import Corpus
from ...judging.baseline import Baseline, early_verdict
from ...judging.metrics import (
    measurement_window,
    served_ends,
)
from ...judging.records import LogEventRecord, StepRecord, TurnRecord
from ...judging.statistics.paired import StepWork
from ...judging.statistics.stats import Estimate
from ...judging.truth.reported import fill_in, runner_reported_from
from ...judging.work import GAINS_KEY, THINK_LAW
from .block_gate import BlockGate
from .orphans import forget_runner, remember_runner
from .production_memory import FootprintSource, footprint_sampler
from .replay import replay_corpus, stop_from_outside
from .sampler import StepSampler
from .stopping import (
    ENDED_BAR_CAP,
    ENDED_CAP,
    ENDED_DECIDED,
    ENDED_LATENCY_CAP,
    ENDED_MINIMUM,
    ENDED_ONE_PASS,
    ENDED_OUT_OF_REACH,
    SteadyStateRule,
)

__all__ = [
    "ENDED_BAR_CAP",
    "ENDED_CAP",
    "ENDED_DECIDED",
    "ENDED_LATENCY_CAP",
    "ENDED_MINIMUM",
    "ENDED_ONE_PASS",
    "ENDED_OUT_OF_REACH",
    "LogSource",
    "StepContext",
    "StepProgress",
    "measure_step",
]


class StepProgress(Protocol):
    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None: ...

    def runner_ready(self, load_seconds: float | None) -> None: ...

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        """After every turn: `done` corpus turns answered at least once, `served` turns
        served in all (repeats included)."""
        ...


class LogSource(Protocol):
    def __call__(self, log_path: Path, runner_kind: str) -> Callable[[], list[LogEventRecord]]: ...


class StepContext(msgspec.Struct, frozen=True):
    runner: Runner
    runner_kind: str
    model: str
    runner_binary: str | None
    port: int
    corpus: Corpus
    settings: ChatSettings
    memory: HostMemorySampler
    production: ProductionWatch
    memory_budget_bytes: int | None
    gpu_budget_bytes: tuple[int | None, ...]
    log_source: LogSource
    clock: Clock
    bounds_now: Callable[[], Bounds]
    threads: int | None = None
    runner_pid_file: Path | None = None
    # what the calibration runner itself holds, polled beside production (None: not watched)
    calibration_watch: Callable[[str], ProductionWatch] | None = None
    early_verdicts: bool = True
    min_step_seconds: float = 60.0
    max_step_seconds: float = 300.0
    # the planned looks are evenly spaced up to here, then double to the cap (None: to the cap)
    even_looks_seconds: float | None = None
    # what the production runner holds, left out of the charged memory (None: not watched)
    production_footprint: FootprintSource | None = None
    # the wait before each turn (the run's tools); none: back to back
    think: ThinkPolicy = ThinkPolicy()
    # the platform's readings beyond memory, kept in each tick of samples.jsonl (None: none)
    sensors: SensorSource | None = None
    # a step above one slot serves blocks of this many seconds one turn at a time and all its
    # slots at a time, in turn (`judging.interleaved`); None: all its slots throughout
    interleave_seconds: float | None = None


class _LineWriter:
    """Appends the step's raw turns to a file from a thread of its own, fsynced in batches.

    A worker only hands its line over: an fsync per turn inside the replay would add its few
    milliseconds to every turn of every worker, a harness overhead that shows up as throughput
    gained past the knee. A crash loses at most the lines not yet written.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name="turns-writer", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def put(self, line: str) -> None:
        self.lines.put(line)

    def close(self) -> None:
        self.lines.put(None)
        self.thread.join()

    def _run(self) -> None:
        done = False
        while not done:
            batch = [self.lines.get()]
            while not self.lines.empty():
                batch.append(self.lines.get())
            done = None in batch
            text = [line for line in batch if line is not None]
            if text:
                append_line_durably(self.path, "\n".join(text))


def measure_step(
    ctx: StepContext,
    index: int,
    slots: int,
    attempt: int,
    baseline: Baseline,
    step_dir: Path,
    progress: StepProgress,
    compare_with: tuple[Estimate, ...] = (),
    pair_with: tuple[tuple[StepWork, ...], ...] = (),
    next_gain: float | None = None,
) -> StepRecord:
    """`compare_with`: throughputs (with their noise) the step's gain is decided against (none:
    minimum time); `pair_with`: for each, the steps' work to pair the step with by cluster
    (empty: read as two independent estimates); `next_gain`: what the next step may gain over
    this one (`prediction.next_step_gain`), how precisely it must be known as a bar."""
    ensure_private_dir(step_dir)
    turn_ids = [t.id for s in ctx.corpus.segments for t in s.turns]
    progress.step_started(index, slots, attempt, len(turn_ids))
    launch = RunnerLaunch(
        slots=slots,
        window=ctx.settings.window,
        port=ctx.port,
        model=ctx.model,
        log_path=step_dir / "runner.log",
        binary=ctx.runner_binary,
        threads=ctx.threads,
    )
    running: RunningRunner = ctx.runner.start(launch)
    try:
        # inside the try: a stop signal while the pid is being recorded still stops the runner
        if ctx.runner_pid_file is not None:
            remember_runner(ctx.runner_pid_file, running.pid, running.argv)
        running.wait_ready()
        load_seconds = running.preload()
        progress.runner_ready(load_seconds)
        version = running.info().version
        gate = _gate_for(ctx, slots)
        return _replay_with_sampler(
            ctx,
            running,
            index,
            slots,
            attempt,
            baseline,
            step_dir,
            turn_ids,
            load_seconds,
            version,
            progress,
            SteadyStateRule(
                ctx,
                slots,
                compare_with,
                baseline,
                baseline.pairing,
                pair_with,
                next_gain,
                blocks=None if gate is None else lambda: gate.blocks,
                no_bar=slots <= 1 and _interleaves(ctx),
            ),
            gate,
        )
    finally:
        running.stop()
        if ctx.runner_pid_file is not None:
            forget_runner(ctx.runner_pid_file)


def _replay_with_sampler(
    ctx: StepContext,
    running: RunningRunner,
    index: int,
    slots: int,
    attempt: int,
    baseline: Baseline,
    step_dir: Path,
    turn_ids: list[str],
    load_seconds: float | None,
    version: str | None,
    progress: StepProgress,
    stopping: SteadyStateRule,
    gate: BlockGate | None,
) -> StepRecord:
    log_events = ctx.log_source(running.log_path, ctx.runner_kind)
    # the start-up and preload lines are not part of the replay; what they report is kept
    startup = [replace(e, during_replay=False) for e in log_events()]
    memory_crossed: list[str] = []
    budget = ctx.memory_budget_bytes

    def on_tick(sample: MemorySample) -> None:
        if slots > 1 and budget and sample.wired_bytes is not None:
            ceiling = ctx.bounds_now().wired_ceiling * budget
            if sample.wired_bytes > ceiling and not memory_crossed:
                memory_crossed.append(
                    f"memory: wired {sample.wired_bytes / 1e9:.2f} GB crossed the ceiling "
                    f"{ceiling / 1e9:.2f} GB"
                )
                running.stop()  # protect the machine now; in-flight turns are not recorded

    read_footprint, footprint = footprint_sampler(ctx.production_footprint)
    sampler = StepSampler(
        memory=ctx.memory,
        production=ctx.production,
        log_events=log_events,
        runner_pid=lambda: running.pid,
        samples_path=step_dir / "samples.jsonl",
        clock=ctx.clock,
        on_tick=on_tick,
        calibration=ctx.calibration_watch(running.base_url) if ctx.calibration_watch else None,
        footprint=read_footprint if ctx.production_footprint is not None else None,
        sensors=ctx.sensors,
    )
    results = _LineWriter(step_dir / "turns.jsonl")
    started_at = ctx.clock.now()

    def record_turn(record: TurnRecord) -> None:
        results.put(json.dumps(as_json(record)))

    # each corpus turn's first answer is the one compared; kept as turns come in, because
    # this runs under the replay's lock after every turn and a steady-state step has many
    first_answers: dict[str, TurnResult] = {}
    served_count = [0]
    answered: set[str] = set()  # corpus turns answered at least once (the one pass)

    def check(turns: list[TurnRecord]) -> str | None:
        latest = turns[-1]
        served_count[0] += 1 if latest.result.served else 0
        answered.add(latest.turn_id)
        progress.turn_done(len(answered), served_count[0], sampler.latest)
        if memory_crossed:
            return memory_crossed[0]
        if not ctx.early_verdicts or latest.turn_id in first_answers:
            return None  # a repeated turn changes no first answer
        first_answers[latest.turn_id] = latest.result
        by_id = first_answers
        return early_verdict(
            slots,
            [by_id.get(t) for t in turn_ids],
            turn_ids,
            baseline,
            ctx.bounds_now(),
            turn_ids,
            sampler.peak_wired,
            budget,
        )

    sampler.start()
    results.start()
    try:
        outcome = replay_corpus(
            running,
            ctx.corpus.segments,
            slots,
            ctx.settings,
            check,
            record_turn,
            accept=lambda: not memory_crossed,
            keep_going=stopping,
            think=lambda turn: ctx.think.seconds_before(turn.think_s),
            # judged by the closed-system law turn by turn: no whole pass or run is needed
            by_turn=ctx.think.waits,
            gate=gate,
        )
    finally:
        results.close()
        sampler.stop()
    if memory_crossed:
        stop_from_outside(outcome, memory_crossed[0])
    return StepRecord(
        index=index,
        slots=slots,
        window=ctx.settings.window,
        attempt=attempt,
        started_at=started_at,
        ended_at=ctx.clock.now(),
        load_seconds=load_seconds,
        turns=tuple(outcome.turns),
        timeline=tuple(sampler.timeline),
        memory_budget_bytes=budget,
        gpu_budget_bytes=ctx.gpu_budget_bytes,
        log_events=tuple(startup) + tuple(sampler.events),
        production=sampler.production_record(),
        ended_early=outcome.ended_early,
        runner_version=version,
        corpus_turns=len(turn_ids),
        measurement=_measurement(outcome.turns, slots, ctx, stopping, outcome.ended_early),
        production_footprint_bytes=footprint.host_bytes,
        production_gpu_bytes=footprint.gpu_tuple(),
        production_footprint=footprint.how,
        # lines a runner flushed late still say how it was set up
        runner_reported=fill_in(
            runner_reported_from(startup), runner_reported_from(sampler.events)
        ),
        shape=ctx.corpus.shape,
        blocks=() if gate is None else gate.blocks,
    )


def _gate_for(ctx: StepContext, slots: int) -> BlockGate | None:
    """The blocks a step above one slot interleaves, where the sweep asks for them; none where
    its think policy waits (judged turn by turn by the closed-system law, a run in flight
    holds its slot through its tools' time)."""
    if slots <= 1 or ctx.interleave_seconds is None or not _interleaves(ctx):
        return None
    return BlockGate(slots, ctx.interleave_seconds)


def steps_interleave(interleave_seconds: float | None, think: ThinkPolicy) -> bool:
    """Every step above one slot carries its own one-slot blocks: blocks were asked for, and
    no think policy waits (such a sweep is read by the closed-system law)."""
    return interleave_seconds is not None and not think.waits


def _interleaves(ctx: StepContext) -> bool:
    return steps_interleave(ctx.interleave_seconds, ctx.think)


def _measurement(
    turns: list[TurnRecord],
    slots: int,
    ctx: StepContext,
    stopping: SteadyStateRule,
    ended_early: str | None,
) -> dict[str, object]:
    window = measurement_window(turns, slots)
    return {
        "start": window[0] if window else None,
        "end": window[1] if window else None,
        "turns": len(served_ends(turns, *window)) if window else 0,
        "min_seconds": ctx.min_step_seconds,
        "max_seconds": ctx.max_step_seconds,
        "why_ended": ended_early or stopping.why,
        "reached_cap": stopping.reached_cap and not ended_early,
        # the planned look it stopped at: its interval is read at that look's confidence
        "look": 0 if ended_early else stopping.look,
        "looks": stopping.looks,
        # a policy that waits before turns: the gains are read by the closed-system law from
        # response times (`judging.statistics.think_law`); absent, by credited work
        **({GAINS_KEY: THINK_LAW} if ctx.think.waits else {}),
        # an interleaved step's block length (its blocks are the record's `blocks`)
        **({"block_seconds": ctx.interleave_seconds} if stopping.blocks is not None else {}),
    }
