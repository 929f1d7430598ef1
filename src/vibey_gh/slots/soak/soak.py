"""`slots soak`: hold one N on the calibration runner beside production for a duration.

Before the first turn it settles what a calibration settles (identity and version, the corpus
fits, production idle, orphaned runners stopped), picks N (`choice`), and opens the soak's
checkpoint (`journal`): a soak cut short resumes with what was measured. It then starts the
calibration runner at N and replays the corpus as a step does, closed-loop workers cycling
through it, until the soak's measured time reaches the duration; every tick's readings and
every turn are kept as they come. At the end it judges the drift and writes the sealed soak
file (`record`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

from ...config import LocalModels, load_config
from ...files import leftover_temp_files
from ...interfaces.durations import format_duration
from ...interfaces.readings import ReadingSample
from ...interfaces.slots_interface import ChatSettings, RunnerLaunch
from ...runners.process import ensure_port_free
from ..evidence.soak_file import soak_request_path
from ..judging.metrics import ramp_up_end
from ..judging.records import TurnRecord
from ..measurement.calibrate import PORT_ADVICE, last_good_bounds, remove_leftover_temp_files
from ..measurement.calibration_method import check_corpus_fits, think_policy_of
from ..measurement.calibration_setup import Environment
from ..measurement.calibration_start import check_identity, start_when_idle
from ..measurement.progress_lines import counted
from ..measurement.stepping.orphans import (
    PID_FILE,
    forget_runner,
    remember_runner,
    stop_orphaned_runner,
)
from ..measurement.stepping.replay import replay_corpus
from .choice import choose_slots, evidence_ideal, requested_fingerprint
from .journal import SoakJournal, Span, open_journal
from .record import SoakOutcome, record_soak
from .request import SoakRequest
from .sampler import SoakSampler

# less than this left to measure: the soak is done (a resume would only add ramp-up)
DONE_WITHIN_S = 1.0


class SoakProgress(Protocol):
    def message(self, text: str) -> None: ...


def run_soak(
    req: SoakRequest,
    env: Environment,
    progress: SoakProgress,
    bounds_source: Callable[[], LocalModels] = load_config,
) -> SoakOutcome:
    cal = req.calibration
    check_corpus_fits(cal.corpus, cal.window, cal.max_tokens)
    if cal.if_requested:
        fingerprint_id = requested_fingerprint(env, cal.window)
        if not soak_request_path(env.layout, fingerprint_id).exists():
            return SoakOutcome.skipped_for(fingerprint_id, "no soak request for this fingerprint")
    starting = check_identity(cal, env, progress)
    fingerprint = env.fingerprint_of(env.device, starting.identity, cal.window)
    ideal, why = evidence_ideal(env.layout, fingerprint.id, cal.config.bounds)
    slots, chosen = choose_slots(req.slots, ideal, why, req.force)
    orphan = stop_orphaned_runner(env.layout.root / PID_FILE)
    if orphan is not None:
        progress.message(f"stopped calibration runner {orphan} left by an interrupted run")
    start_when_idle(env.production, env.clock, progress, cal.wait_idle_s, "a soak")
    remove_leftover_temp_files(env.layout)
    for folder in (env.layout.evidence / "soak", env.layout.requests / "soak",
                   env.layout.progress / "soak"):  # fmt: skip
        for leftover in leftover_temp_files(folder):
            leftover.unlink(missing_ok=True)
    key = {
        "fingerprint": fingerprint.id,
        "slots": slots,
        "duration_s": req.duration_s,
        "window_s": req.window_s,
        "corpus": cal.corpus.corpus_sha256,
        "runner": cal.config.runner,
        "model": cal.config.model,
        "window": cal.window,
        "max_tokens": cal.max_tokens,
        "think": think_policy_of(cal).to_json(),
    }
    journal = open_journal(
        env.layout, fingerprint.id, slots, key, env.clock.now(), cal.restart, progress.message
    )
    measured = journal.measured_s()
    progress.message(
        f"soak at N={slots} ({chosen}) for {format_duration(req.duration_s)}, windows of "
        f"{format_duration(req.window_s)}; raw turns and readings in {journal.run_dir}"
    )
    if measured > 0:
        progress.message(f"resuming: {format_duration(measured)} already measured")
    bounds_now = last_good_bounds(bounds_source, cal.config.bounds, progress.message)
    remaining = req.duration_s - measured
    stopped: str | None = None
    if remaining > DONE_WITHIN_S:
        ensure_port_free(cal.config.calibration_port, what_to_do=PORT_ADVICE)
        stopped = _measure_span(req, env, progress, journal, slots, remaining)
    return record_soak(
        req, env, journal, fingerprint, slots, bounds_now(), progress.message, stopped
    )


class _Window:
    """Says each window as it closes; stops the replay at the soak's end or a broken ceiling."""

    def __init__(
        self,
        req: SoakRequest,
        env: Environment,
        progress: SoakProgress,
        journal: SoakJournal,
        span: Span,
        slots: int,
        remaining: float,
    ) -> None:
        self.req, self.env, self.progress = req, env, progress
        self.journal, self.span, self.slots, self.remaining = journal, span, slots, remaining
        self.said = 0
        self.crossed: list[str] = []

    def _started(self, turns: list[TurnRecord]) -> float | None:
        """When every worker had started: the span's start, written once known, so a kill
        after it keeps the span's turns."""
        if self.span.start is None:
            start = ramp_up_end(turns, self.slots)
            if start is not None:
                self.span.start = start
                self.journal.save()
        return self.span.start

    def keep_going(self, turns: list[TurnRecord]) -> bool:
        if self.crossed:
            return False
        start = self._started(turns)
        return start is None or self.env.clock.monotonic() < start + self.remaining

    def check(self, turns: list[TurnRecord]) -> str | None:
        start = self._started(turns)
        if start is not None:
            closed = math.floor((self.env.clock.monotonic() - start) / self.req.window_s)
            if closed > self.said:
                self.said = closed
                done = self.journal.measured_s() + closed * self.req.window_s
                served = sum(
                    1 for t in turns if t.result.served and t.result.ended > start
                )  # fmt: skip
                self.progress.message(
                    f"{format_duration(done)} of {format_duration(self.req.duration_s)}: "
                    f"{counted(served, 'turn')} served in this run of the runner"
                )
        return self.crossed[0] if self.crossed else None

    def on_tick(self, sample: ReadingSample) -> None:
        budget = self.env.device.memory_budget_bytes
        wired = sample.value("charged.wired_bytes") or sample.value("host.wired_bytes")
        ceiling = self.req.calibration.config.bounds.wired_ceiling
        over = self.slots > 1 and budget and wired is not None and wired > ceiling * budget
        if over and wired is not None and budget and not self.crossed:
            self.crossed.append(
                f"memory: wired {wired / 1e9:.2f} GB crossed the ceiling "
                f"{ceiling * budget / 1e9:.2f} GB"
            )


def _measure_span(
    req: SoakRequest,
    env: Environment,
    progress: SoakProgress,
    journal: SoakJournal,
    slots: int,
    remaining: float,
) -> str | None:
    """Measure until the soak's time is up; what stopped it early (a broken ceiling), if."""
    cal = req.calibration
    span = journal.begin_span(env.clock.now())
    launch = RunnerLaunch(
        slots=slots, window=cal.window, port=cal.config.calibration_port, model=cal.config.model,
        log_path=journal.span_dir(span.index) / "runner.log", binary=cal.config.runner_binary,
        threads=cal.threads,
    )  # fmt: skip
    pid_file = env.layout.root / PID_FILE
    running = env.runner.start(launch)
    window = _Window(req, env, progress, journal, span, slots, remaining)
    sampler: SoakSampler | None = None
    try:
        remember_runner(pid_file, running.pid, running.argv)
        running.wait_ready()
        running.preload()
        sampler = SoakSampler(
            journal, span.index, env.memory, env.sensors, env.production,
            lambda: running.pid, env.clock, env.production_footprint, req.tick_s, window.on_tick,
        )  # fmt: skip
        sampler.start()
        think = think_policy_of(cal)
        replayed = replay_corpus(
            running,
            cal.corpus.segments,
            slots,
            ChatSettings(
                window=cal.window,
                max_tokens=cal.max_tokens,
                timeout_s=cal.request_timeout_s,
                stream=True,
            ),  # fmt: skip
            window.check,
            lambda record: journal.add_turn(span.index, record),
            accept=lambda: not window.crossed,
            keep_going=window.keep_going,
            think=lambda turn: think.seconds_before(turn.think_s),
        )
    finally:
        if sampler is not None:
            sampler.stop()
        journal.flush_turns()
        running.stop()
        forget_runner(pid_file)
        if span.start is not None:
            span.end = min(env.clock.monotonic(), span.start + remaining)
        journal.save()
    stopped = window.crossed[0] if window.crossed else replayed.ended_early
    if stopped:
        progress.message(f"the soak stopped: {stopped}")
    return stopped
