"""`slots calibrate`: run the sweep on a calibration runner beside production, checkpointed.

The loop: identify today's fingerprint (from the calibration binary and the model store when
production is not running), refuse a calibration runner of another version than production's
before the first step, wait for (or refuse) a production that holds a model, resume the
steps a checkpoint holds, then let the sweep generator pick each next slot count; measure it
(again, up to twice, when production was busy meanwhile), checkpoint it, and finally write the
evidence. A sweep with no clean step, or whose calibration runner is not production's version,
is written to --out for the record and not recorded as this device's evidence. A sweep whose
first one-slot step failed turns (or found the corpus too long for the window) stops there and
writes nothing: that evidence could not be true (`trust.untrustworthy_floor`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from msgspec.structs import replace

from ...config import LocalModels, load_config
from ...errors import BadInput, Refused, VibeyError
from ...files import leftover_temp_files
from ...interfaces.bounds import Bounds
from ...interfaces.slots_interface import ChatSettings
from ...runners.process import ensure_port_free
from ...runners.registry import runner_kind
from ...state import StateLayout
from ..evidence.requests import clear_request, request_path
from ..evidence.store import evidence_path
from ..judging.baseline import baseline_of, sweep_figures
from ..judging.judge import Verdict, judge_figures, rates_of
from ..judging.records import StepRecord
from ..judging.statistics.knee import best_of
from ..judging.statistics.paired import StepWork
from ..judging.statistics.sequential import first_look
from ..judging.statistics.stats import Estimate
from ..judging.sweep import next_step_gain, sweep_steps
from ..judging.truth.trust import untrustworthy_floor
from .calibration_method import (
    check_corpus_fits,
    check_turns_fit_a_step,
    method_of,
    think_policy_of,
)
from .calibration_setup import CalibrationOutcome, CalibrationRequest, Environment
from .calibration_start import (
    check_identity,
    identity_of_production,
    start_when_idle,
    wait_for_idle,
)
from .evidence_writer import SweepResult, check_out_dir, write_evidence_files
from .progress_lines import SweepPlan, measured_of
from .resume import open_checkpoint, replay_completed
from .stepping.orphans import PID_FILE, stop_embedded_runner_on_port, stop_orphaned_runner
from .stepping.production_memory import check_fits_beside_production
from .stepping.step import StepContext, StepProgress, measure_step, steps_interleave
from .stepping.stopping import reference_repeats

MAX_REMEASURES = 2
PORT_ADVICE = (
    "stop that process, or calibrate on another port (--port N, or [local_models] calibration_port)"
)
IDLE_WAIT_S = 600.0
NOT_REQUESTED = "no calibration request for this fingerprint"


class CalibrationProgress(StepProgress, Protocol):
    def message(self, text: str) -> None: ...

    def sweep_started(self, plan: SweepPlan) -> None: ...

    def step_finished(self, step: StepRecord, verdict_label: str) -> None: ...


def remove_leftover_temp_files(layout: StateLayout) -> None:
    """Half-written temporary files of a calibration killed mid-write (the finished files they
    were meant to replace are intact): in the folders it writes, each step's run folder and
    the derived caches included."""
    folders = [layout.root, layout.progress, layout.evidence, layout.requests]
    for parent in (layout.cache, layout.runs, layout.evidence / "history"):
        if parent.is_dir():
            folders.extend(p for p in parent.rglob("*") if p.is_dir() and not p.is_symlink())
    for folder in folders:
        for leftover in leftover_temp_files(folder):
            leftover.unlink(missing_ok=True)


def pending_request(env: Environment, window: int) -> tuple[str, bool]:
    """Today's fingerprint at `window`, and whether a calibration request waits for it."""
    identity, _absent = identity_of_production(env)
    fingerprint = env.fingerprint_of(env.device, identity, window)
    return fingerprint.id, request_path(env.layout, fingerprint.id).exists()


def last_good_bounds(
    source: Callable[[], LocalModels], first: Bounds, say: Callable[[str], None]
) -> Callable[[], Bounds]:
    """The bounds as the config says now (design §5: re-read at each decision); while the
    config cannot be read (edited into invalid TOML mid-run), the last good ones, said once."""
    last = [first]
    said: list[str] = []
    guard = threading.Lock()  # replay workers ask from their own threads

    def bounds_now() -> Bounds:
        try:
            bounds = source().bounds
        except VibeyError as exc:
            with guard:
                first_time = not said
                said.append(str(exc))
            if first_time:
                say(f"the config cannot be read ({exc}); keeping the last good bounds")
            return last[0]
        with guard:
            last[0] = bounds
            said.clear()
        return bounds

    return bounds_now


def run_calibration(
    req: CalibrationRequest,
    env: Environment,
    progress: CalibrationProgress,
    bounds_source: Callable[[], LocalModels] = load_config,
) -> CalibrationOutcome:
    if req.split_window:
        if req.out_dir is None:
            raise BadInput("--split-window is a what-if, never evidence: give --out FOLDER")
    else:
        check_corpus_fits(req.corpus, req.window, req.max_tokens)
    think = think_policy_of(req)
    check_turns_fit_a_step(req, think)
    if req.if_requested:
        fingerprint_id, requested = pending_request(env, req.window)
        if not requested:
            return CalibrationOutcome(
                fingerprint_id, None, NOT_REQUESTED, False, False, None, skipped=True
            )
    starting = check_identity(req, env, progress)
    identity = starting.identity
    fingerprint = env.fingerprint_of(env.device, identity, req.window)
    if req.out_dir is not None:
        check_out_dir(req.out_dir)
    orphans = [stop_orphaned_runner(env.layout.root / PID_FILE)]
    if runner_kind(req.config.runner).calibrates_this_package:
        # Also when the pid file named one: a kill between starting a step's runner and
        # recording it leaves the file naming the previous step's runner, still stopping.
        orphans.append(stop_embedded_runner_on_port(req.config.calibration_port))
    for orphan in orphans:
        if orphan is not None:
            progress.message(f"stopped calibration runner {orphan} left by an interrupted run")
    start_when_idle(env.production, env.clock, progress, req.wait_idle_s, "calibration")
    _check_room_beside_production(req, env, progress)
    method = method_of(req)
    remove_leftover_temp_files(env.layout)
    checkpoint, steps = open_checkpoint(
        env.layout,
        fingerprint.id,
        req.corpus.corpus_sha256,
        method,
        req.restart,
        progress.message,
    )
    if steps:
        progress.message(f"resuming: {len(steps)} completed step(s) from {checkpoint.path}")

    bounds_now = last_good_bounds(bounds_source, req.config.bounds, progress.message)

    # each step is judged once, by the sweep; its verdict is what the progress line says
    verdicts: list[Verdict] = []
    generator = sweep_steps(bounds_now, req.slots, req.max_slots, on_verdict=verdicts.append)
    loaded = len(steps)
    steps, next_slots, stop_reason = replay_completed(
        generator, steps, checkpoint.path, progress.message
    )
    resumed = len(steps)
    slots = next_slots or 0
    if stop_reason is None:
        # a port taken now is said before anything else (it is checked again at each step)
        ensure_port_free(req.config.calibration_port, what_to_do=PORT_ADVICE)
        bounds = bounds_now()  # read once: the plan's parts agree with each other
        interleaves = steps_interleave(req.config.interleave_seconds, think)
        progress.sweep_started(
            SweepPlan(
                explicit=req.slots,
                max_slots=req.max_slots,
                done=resumed,
                min_step_s=req.config.min_step_seconds,
                max_step_s=req.config.step_cap_seconds,
                even_looks_s=req.config.even_looks_seconds,
                measured=measured_of(steps),
                patience=bounds.patience,
                closing=not interleaves,
                first_look_s=first_look(
                    req.config.min_step_seconds,
                    req.config.interleave_seconds if interleaves else None,
                ),
                one_pass_runs=interleaves and bounds.latency_factor is None,
                reference_passes=(
                    math.ceil(
                        reference_repeats(req.config.min_step_seconds, req.config.step_cap_seconds)
                        / 2
                    )
                    if bounds.latency_factor is not None
                    else None
                ),
            )
        )

    run_dir = env.layout.runs / (
        time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(env.clock.now())) + f"-{fingerprint.id}"
    )
    ctx = StepContext(
        runner=env.runner,
        runner_kind=req.config.runner,
        model=req.config.model,
        runner_binary=req.config.runner_binary,
        port=req.config.calibration_port,
        corpus=req.corpus,
        settings=ChatSettings(
            window=req.window,
            max_tokens=req.max_tokens,
            timeout_s=req.request_timeout_s,
            stream=True,
        ),
        memory=env.memory,
        production=env.production,
        memory_budget_bytes=env.device.memory_budget_bytes,
        gpu_budget_bytes=tuple(a.memory_bytes for a in env.device.accelerators),
        log_source=env.log_source,
        clock=env.clock,
        bounds_now=bounds_now,
        threads=req.threads,
        runner_pid_file=env.layout.root / PID_FILE,
        calibration_watch=env.calibration_watch,
        early_verdicts=req.early_verdicts,
        min_step_seconds=req.config.min_step_seconds,
        max_step_seconds=req.config.step_cap_seconds,
        even_looks_seconds=req.config.even_looks_seconds,
        interleave_seconds=req.config.interleave_seconds,
        production_footprint=env.production_footprint,
        think=think,
        sensors=env.sensors,
    )
    new_steps = 0
    unclean = False
    while stop_reason is None:
        if req.max_runs is not None and new_steps >= req.max_runs:
            break
        # before this step's folder is made
        ensure_port_free(req.config.calibration_port, what_to_do=PORT_ADVICE)
        step = _measure_clean(
            ctx, len(steps), slots, steps, run_dir, env, progress, req.wait_idle_s
        )
        new_steps += 1
        if not step.production.clean:
            unclean = True
            stop_reason = (
                f"step {step.index} (N={slots}) never got a clean measurement: the production "
                "runner held a model during every attempt"
            )
            break
        if step.slots == 1 and not any(s.slots == 1 for s in steps):
            untrustworthy = untrustworthy_floor(
                step, req.corpus.turn_count, refusals_expected=req.split_window
            )
            if untrustworthy is not None:
                raise Refused(f"{untrustworthy} (turns: {run_dir})")
        steps.append(step)
        checkpoint.save(steps)
        try:
            slots = generator.send(step)
        except StopIteration as stop:
            stop_reason = str(stop.value)
        progress.step_finished(step, verdicts[-1].label)

    complete = stop_reason is not None and not unclean
    result = SweepResult(
        fingerprint,
        identity,
        steps,
        method,
        stop_reason,
        complete,
        run_dir,
        production_absent=starting.production_absent,
        version_mismatch=starting.version_mismatch,
    )
    outcome = replace(
        write_evidence_files(req, env, result),
        new_steps=new_steps,
        resumed_steps=resumed,
        version_mismatch=starting.version_mismatch,
        production_absent=starting.production_absent,
    )
    # steps beyond a smaller --max-slots stay in the checkpoint until a sweep measures anew
    keeps_more = loaded > resumed and new_steps == 0
    if complete and not keeps_more:
        checkpoint.path.unlink(missing_ok=True)
        if outcome.recorded:
            clear_request(env.layout, fingerprint.id)
    return outcome


def _check_room_beside_production(
    req: CalibrationRequest, env: Environment, progress: CalibrationProgress
) -> None:
    """Say what production holds, and refuse at once when its model on the GPU leaves no room
    for the calibration runner's (rather than failing mid-load at the first step)."""
    if env.production_footprint is None:
        return
    held = env.production_footprint.read()
    if held.host_bytes is not None:
        progress.message(
            f"production holds {held.host_bytes / 1e9:.2f} GB, left out of the memory charged "
            f"to each step ({held.how})"
        )
    if env.calibration_model_bytes is None:
        return
    check_fits_beside_production(
        held, env.memory.sample(), env.calibration_model_bytes(), req.config.model
    )


def _measure_clean(
    ctx: StepContext,
    index: int,
    slots: int,
    steps: list[StepRecord],
    run_dir: Path,
    env: Environment,
    progress: CalibrationProgress,
    wait_idle_s: float | None = None,
) -> StepRecord:
    baseline = baseline_of(steps)
    compare_with, pair_with = bars_for(steps, slots, ctx.bounds_now())
    next_gain = next_gain_for(steps, slots, ctx.bounds_now())
    discarded = 0
    while True:
        attempt = discarded + 1
        step_dir = run_dir / f"step-{index:02d}-n{slots}-a{attempt}"
        step = measure_step(
            ctx,
            index,
            slots,
            attempt,
            baseline,
            step_dir,
            progress,
            compare_with,
            pair_with,
            next_gain,
        )
        if step.production.clean or discarded >= MAX_REMEASURES:
            return _with_discards(step, discarded)
        discarded += 1
        progress.message(
            f"step {index} (N={slots}) discarded: the production runner held a model "
            f"({', '.join(step.production.models_seen) or 'busy'}); measuring again once idle"
        )
        if not wait_for_idle(env.production, env.clock, progress, wait_idle_s or IDLE_WAIT_S):
            progress.message("production stayed busy; measuring again anyway")


def bars_for(
    steps: Sequence[StepRecord], slots: int, bounds: Bounds
) -> tuple[tuple[Estimate, ...], tuple[tuple[StepWork, ...], ...]]:
    """The bars a step's gain is decided against, as the verdict and the patience rule read
    them — one slot, and the best step so far (`knee.best_of`) — and, where the sweep can be
    paired, the steps' work to pair the step with for each (the pooled one-slot runs; the best
    step): paired, the bars' noise is in the paired interval."""
    if slots <= 1:
        return (), ()
    figures = sweep_figures(steps)
    if figures.baseline.best_rate <= 0:
        return (), ()
    verdicts = judge_figures(figures, bounds).verdicts
    pairing = baseline_of(steps).pairing
    best = best_of(rates_of(verdicts), bounds.confidence)
    bars = [figures.baseline.bar]
    if best is not None:
        bars.append(best.throughput)
    if pairing is None:
        return tuple(bars), ()
    best_work = None
    if best is not None:
        best_work = pairing.work_of(next(s for s in steps if s.index == best.index))
    pair_with = (pairing.pool, (best_work,) if best_work is not None else ())
    return tuple(bars), pair_with[: len(bars)]


def next_gain_for(steps: Sequence[StepRecord], slots: int, bounds: Bounds) -> float | None:
    """What the step after this one may gain over it, from the closed-system model fitted on
    the steps so far (`prediction.next_step_gain`); None at one slot."""
    if slots <= 1:
        return None
    verdicts = judge_figures(sweep_figures(steps), bounds).verdicts
    return next_step_gain(verdicts, slots, bounds.min_gain)


def _with_discards(step: StepRecord, discarded: int) -> StepRecord:
    return replace(step, discarded_attempts=discarded)


def evidence_location(layout: StateLayout, fingerprint: str) -> Path:
    return evidence_path(layout, fingerprint)
