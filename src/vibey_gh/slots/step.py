"""Measure one step: start the calibration runner with N slots, preload, replay, sample, stop."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..clock import Clock
from ..config import Bounds
from ..files import append_line_durably, ensure_private_dir
from ..interfaces.slots_interface import (
    ChatSettings,
    HostMemorySampler,
    MemorySample,
    ProductionWatch,
    Runner,
    RunnerLaunch,
    RunningRunner,
)
from .baseline import Baseline, early_verdict
from .corpus import Corpus
from .orphans import forget_runner, remember_runner
from .records import LogEventRecord, StepRecord, TurnRecord
from .replay import replay_corpus, stop_from_outside
from .sampler import StepSampler


class StepProgress(Protocol):
    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None: ...

    def runner_ready(self, load_seconds: float | None) -> None: ...

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None: ...


class LogSource(Protocol):
    def __call__(self, log_path: Path, runner_kind: str) -> Callable[[], list[LogEventRecord]]: ...


@dataclass(frozen=True)
class StepContext:
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


def measure_step(
    ctx: StepContext,
    index: int,
    slots: int,
    attempt: int,
    baseline: Baseline,
    step_dir: Path,
    progress: StepProgress,
) -> StepRecord:
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
            remember_runner(ctx.runner_pid_file, running.pid)
        running.wait_ready()
        load_seconds = running.preload()
        progress.runner_ready(load_seconds)
        version = running.info().version
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
) -> StepRecord:
    log_events = ctx.log_source(running.log_path, ctx.runner_kind)
    log_events()  # the start-up and preload lines are not part of the replay
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

    sampler = StepSampler(
        memory=ctx.memory,
        production=ctx.production,
        log_events=log_events,
        runner_pid=lambda: running.pid,
        samples_path=step_dir / "samples.jsonl",
        clock=ctx.clock,
        on_tick=on_tick,
        calibration=ctx.calibration_watch(running.base_url) if ctx.calibration_watch else None,
    )
    results_path = step_dir / "turns.jsonl"
    started_at = ctx.clock.now()

    def record_turn(record: TurnRecord) -> None:
        append_line_durably(results_path, json.dumps(record.to_json()))

    def check(turns: list[TurnRecord]) -> str | None:
        served = sum(1 for t in turns if t.result.served)
        progress.turn_done(len(turns), served, sampler.latest)
        if memory_crossed:
            return memory_crossed[0]
        if not ctx.early_verdicts:
            return None
        by_id = {t.turn_id: t.result for t in turns}
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
    try:
        outcome = replay_corpus(
            running,
            ctx.corpus.segments,
            slots,
            ctx.settings,
            check,
            record_turn,
            accept=lambda: not memory_crossed,
        )
    finally:
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
        log_events=tuple(sampler.events),
        production=sampler.production_record(),
        ended_early=outcome.ended_early,
        runner_version=version,
        corpus_turns=len(turn_ids),
    )
