"""The storm: work a queue folder, as many lanes at once as `slots allowed` says.

Each pass re-reads the config, asks `decide_allowed` (the library call), logs the answer and
its reason, settles lanes that ended, and claims pending specs until that many lanes run. A
pass follows every lane's end; while fewer lanes run than allowed (or none), one follows every
`poll_s` seconds too, to see new specs. Lanes are threads of this process, each holding the
model lock shared; a lane that cannot get it (a calibration holds it) is not started, and the
log says who holds it. When nothing is pending or running and a calibration request exists,
the storm calibrates (`storm.calibration`). A calibration that could not run (production still
holding a model within Ollama's keep-alive, the lock taken) is tried again on a later idle pass,
after a backoff that doubles from RETRY_FIRST_S to RETRY_LONGEST_S and is logged, until it
runs; one that ran is not repeated by this storm, whatever it found. Lanes never outnumber the
slots production serves now, where it says (`AllowedAnswer.production_slots`).

Stopping (`control.stop`, set by SIGINT/SIGTERM): no lane is claimed any more; running lanes
end at their next turn boundary as "interrupted" and their specs return to pending/; after
`stop_grace_s` a turn in flight is cancelled (and a lane that ignores that goes back as it is),
so a stop ends within seconds whatever production does. A
calibration in progress is interrupted at once (KeyboardInterrupt): its completed steps are
checkpointed and the next calibration resumes them. A KeyboardInterrupt outside a calibration
(a second Ctrl-C) leaves at once: lanes still running stay in running/, and the next storm
settles them from their records like after a crash.

A config that stops parsing while the storm runs does not end it: each pass logs the error and
allows one lane, run with the last config that parsed, and no calibration starts until the
config is fixed (a gate fails safe). A config that does not parse at the first pass is bad
input: the storm does not start.

Records and the log live under the state root, in `lanes/storm-<queue>-<hash>/`: one folder per
lane run (`events.jsonl`) and `storm.log`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..config import LocalModels
from ..errors import BadInput, ConfigError, Refused, VibeyError
from ..interfaces.schema import as_json
from ..interfaces.slots_interface import ChatSettings
from ..lanes.client import ChatClient, runner_description
from ..lanes.loop import LaneOutcome, run_lane
from ..lanes.records import RECORD_KIND, RECORD_SCHEMA, LaneRecorder, new_run_id
from ..lanes.specs import load_spec
from ..slots.evidence.requests import pending_requests
from ..slots.evidence.soak_file import pending_soak_requests
from .calibration import CalibrationBackoff, IdleRun, outcome_report
from .lock import file_lock, model_lock
from .queue import DONE, FAILED, PENDING, STATE_OF_END, StormQueue
from .setup import (
    AGAIN,
    END,
    FULL,
    LOG_FILE,
    WAIT,
    StormControl,
    StormDeps,
    StormLog,
    StormOptions,
    StormSummary,
    storm_folder,
)

# how long lanes whose requests were cancelled get to record their end; the longest grace (a
# service manager kills what has not stopped some seconds after SIGTERM: systemd 90 s)
CANCELLED_WAIT_S, MAX_STOP_GRACE_S = 3.0, 60.0


@dataclass
class _LaneJob:
    name: str
    run_id: str
    spec_path: Path
    lock: contextlib.ExitStack
    thread: threading.Thread | None = None
    outcome: LaneOutcome | None = None
    error: str | None = None
    finished: bool = False


class Storm:
    def __init__(self, options: StormOptions, deps: StormDeps, control: StormControl) -> None:
        self.options, self.deps, self.control = options, deps, control
        self.queue = StormQueue(options.queue, deps.clock)
        self.records = storm_folder(deps.layout, self.queue.root)
        self.log = StormLog(self.records / LOG_FILE, deps.clock, deps.echo)
        self.summary = StormSummary(log=self.log.path, records=self.records)
        self.running: dict[str, _LaneJob] = {}
        self.last_good_config: LocalModels | None = None
        self.backoff = CalibrationBackoff()
        self.soak_backoff = CalibrationBackoff()

    # --- lanes ---------------------------------------------------------------------------

    def _lane_body(self, job: _LaneJob, config: LocalModels) -> None:
        client: ChatClient | None = None
        try:
            recorder = LaneRecorder(self.records, job.run_id, self.deps.clock)
            try:
                spec = load_spec(job.spec_path)
            except BadInput as exc:
                recorder.write(
                    "start",
                    schema_version=RECORD_SCHEMA,
                    kind=RECORD_KIND,
                    spec_file=str(job.spec_path),
                )
                recorder.end(status="failed", error=str(exc), turns=0, retries=0)
                job.error = str(exc)
                return
            client = self.deps.client_for(config)
            settings = ChatSettings(
                window=config.window, max_tokens=self.options.max_tokens or config.max_tokens
            )
            job.outcome = run_lane(
                spec,
                client,
                settings,
                recorder,
                options=self.options.lane,
                runner=runner_description(config),
                stop=self.control.stop,
                clock=self.deps.clock,
            )
        except Exception as exc:  # recorded by run_lane where it could be; never kills the storm
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            if client is not None:
                client.close()
            job.lock.close()
            job.finished = True  # before the wake, so the pass it wakes sees it finished
            self.control.wake.set()

    def _start_lanes(self, allowed: int, config: LocalModels) -> None:
        for name in self.queue.pending():
            if len(self.running) >= allowed or self.control.stop.is_set():
                return
            stack = contextlib.ExitStack()
            try:
                stack.enter_context(
                    model_lock(self.deps.layout, exclusive=False, wait=False, role="lane")
                )
            except Refused as exc:
                self.log(f"not starting lanes: {exc}")
                return
            claim = self.queue.claim(name, new_run_id(Path(name).stem, self.deps.clock))
            if claim is None:
                stack.close()
                continue
            job = _LaneJob(claim.name, claim.run_id, claim.spec_path, stack)
            job.thread = threading.Thread(
                target=self._lane_body, args=(job, config), name=f"lane {name}", daemon=True
            )
            self.running[name] = job
            self.summary.started += 1
            self.log(f"lane {name} started as {claim.run_id}")
            job.thread.start()

    def _settle_finished(self, wait: bool = False) -> None:
        for name, job in list(self.running.items()):
            assert job.thread is not None
            if not (wait or job.finished):
                continue
            job.thread.join()
            del self.running[name]
            outcome = job.outcome
            status = outcome.status if outcome else "failed"
            state = STATE_OF_END.get(status, FAILED)
            destination = self.queue.settle(name, state)
            self.summary.settled[state] += 1
            if outcome is not None:
                detail = f"after {outcome.turns} turns, {outcome.retries} retries"
                if outcome.error:
                    detail += f" ({outcome.error})"
            else:
                detail = f"({job.error or 'no outcome'})"
            self.log(f"lane {name} ({job.run_id}) {status} {detail} → {state}/{destination}")

    def _wait_for_lanes(self, seconds: float) -> None:
        """Until every lane has ended or `seconds` have passed (thread joins: real time)."""
        deadline = time.monotonic() + seconds
        for job in list(self.running.values()):
            assert job.thread is not None
            job.thread.join(max(0.0, deadline - time.monotonic()))

    def _finish_lanes(self) -> None:
        """Wait for the running lanes; a stop, before or while waiting, gives them the grace and
        then cancels their turns."""
        while any(not job.finished for job in self.running.values()):
            if self.control.stop.is_set():
                self.log(f"stopping: waiting for {len(self.running)} lane(s) to stop")
                self._stop_lanes()
                break
            self.control.wake.wait(1.0)  # a lane's end wakes it
            self.control.wake.clear()
        self.summary.stopped = self.control.stop.is_set()

    def _stop_lanes(self) -> None:
        """Lanes end at their turn's end; a turn still in flight after the grace is cancelled,
        and a lane that ignores even that goes back to pending/ as it is."""
        grace = self.options.stop_grace_s
        self._wait_for_lanes(grace)
        busy = [job for job in self.running.values() if not job.finished]
        if not busy or self.last_good_config is None:  # (lanes start only after a config)
            return
        cancelled = self.deps.cancel_requests(self.last_good_config)
        said = f"{len(busy)} lane(s) still in a turn after {grace:g}s"
        self.log(f"stopping: {said}; cancelled {cancelled} request(s) in flight")
        self._wait_for_lanes(CANCELLED_WAIT_S)
        for job in [job for job in busy if not job.finished]:
            del self.running[job.name]
            destination = self.queue.settle(job.name, PENDING)
            self.summary.settled[PENDING] += 1
            self.log(f"lane {job.name} ({job.run_id}) did not stop; its record has no end → "
                     f"{PENDING}/{destination}")  # fmt: skip

    # --- calibration ---------------------------------------------------------------------

    def _due_requests(self) -> set[str]:
        """Requested fingerprints this storm has not calibrated and whose backoff is over."""
        wanted = {request.fingerprint for request in pending_requests(self.deps.layout)}
        return self.backoff.due(wanted, self.deps.clock.monotonic())

    def _calibration_not_run(self, due: set[str], why: str) -> None:
        attempts, delay = self.backoff.failed(due, self.deps.clock.monotonic())
        self.log(
            f"calibration not run: {why}; trying again on an idle pass in {delay:.0f}s "
            f"(attempt {attempts} failed)"
        )
        self.summary.calibrations.append({"error": why, "attempt": attempts, "retry_s": delay})

    def _maybe_calibrate(self, config: LocalModels) -> bool:
        """Calibrate when a request is pending that this storm has not yet calibrated and its
        backoff allows; True if it tried."""
        plan = self.options.calibration
        if not plan.enabled:
            return False
        fresh = self._due_requests()
        if not fresh:
            return False
        self.log(f"idle with a calibration request ({', '.join(sorted(fresh))}): calibrating")
        self.control.calibrating = True
        try:
            outcome = self.deps.calibrate(self._idle_run(config))
        except KeyboardInterrupt:
            self.log("calibration interrupted; its completed steps are checkpointed")
            self.control.request_stop()
            return True
        except (VibeyError, OSError) as exc:
            self._calibration_not_run(fresh, str(exc) or type(exc).__name__)
            return True
        finally:
            self.control.calibrating = False
        self.backoff.ran(fresh)
        self._log_calibration(outcome)
        return True

    def _idle_run(self, config: LocalModels) -> IdleRun:
        """What a calibration or a soak in idle time works with: this storm's records and log."""
        done, plan = self.queue.folder(DONE), self.options.calibration
        return IdleRun(config, self.deps.layout, self.records, done, plan, self.log)

    def _log_calibration(self, outcome: object) -> None:
        entry, lines = outcome_report(outcome)
        self.summary.calibrations.append(entry)
        for line in lines:
            self.log(line)

    def _maybe_soak(self, config: LocalModels) -> bool:
        """Run a requested soak (`require_soak`) when idle, as a calibration; True if it tried."""
        if not self.options.calibration.enabled or self.deps.soak is None:
            return False
        now = self.deps.clock.monotonic()
        requests = pending_soak_requests(self.deps.layout)
        due = self.soak_backoff.due({r.fingerprint for r in requests}, now)
        request = next((r for r in requests if r.fingerprint in due), None)
        if request is None:
            return False
        self.log(f"idle with a soak request ({request.fingerprint}): soaking")
        self.control.calibrating = True
        try:
            outcome = self.deps.soak(self._idle_run(config), request)
        except KeyboardInterrupt:
            self.log("soak interrupted; what it measured is checkpointed")
            self.control.request_stop()
            return True
        except (VibeyError, OSError) as exc:
            attempts, delay = self.soak_backoff.failed({request.fingerprint}, now)
            self.log(f"soak not run: {exc}; trying again in {delay:.0f}s (attempt {attempts})")
            return True
        finally:
            self.control.calibrating = False
        self.soak_backoff.ran({request.fingerprint})
        self.summary.calibrations.append({"soak": as_json(outcome)})
        said = outcome.reason if outcome.skipped or outcome.path is None else outcome.verdict
        self.log(f"soak at N={outcome.slots}: {said}")
        return True

    # --- the loop ------------------------------------------------------------------------

    def _pass(self) -> str:
        """One pass; what to do next: WAIT for a lane or the poll, go AGAIN now, or END."""
        self.summary.passes += 1
        try:
            config = self.deps.load_config()
        except ConfigError as exc:
            if self.last_good_config is None:
                raise
            return self._pass_on_a_broken_config(exc, self.last_good_config)
        self.last_good_config = config
        answer = self.deps.decide(config)
        self.log(f"pass {self.summary.passes}: allowed {answer.line()}")
        lanes = answer.allowed
        if answer.production_slots is not None:
            lanes = max(1, min(lanes, answer.production_slots))
        self._start_lanes(lanes, config)
        if self.running and len(self.running) >= lanes:
            return FULL
        if self.running or self.queue.pending():
            return WAIT
        if self._maybe_calibrate(config) or self._maybe_soak(config):
            return END if self.control.stop.is_set() else AGAIN  # AGAIN logs the new answer
        return END if self.options.once else WAIT

    def _pass_on_a_broken_config(self, error: ConfigError, last_good: LocalModels) -> str:
        """One lane at most, with the last config that parsed; no calibration; poll again."""
        self.log(f"pass {self.summary.passes}: allowed 1 — config error: {error} (1 until fixed)")
        self._start_lanes(1, last_good)
        if self.running:
            return FULL
        return END if self.options.once and not self.queue.pending() else WAIT

    def run(self) -> StormSummary:
        lock_path = self.deps.layout.locks / f"{self.records.name}.lock"
        with file_lock(
            lock_path, exclusive=True, wait=False, role="storm", name="storm queue lock"
        ):
            self.log(f"storm on {self.queue.root}: {self.queue.counts_text()}")
            for line in self.queue.recover(self.records):
                self.log(line)
            try:
                self._loop()
            except KeyboardInterrupt:
                self._settle_finished()
                self.log(f"stopped at once: {len(self.running)} lane(s) left in running/")
                raise
            self._finish_lanes()
            self._settle_finished(wait=True)
            self.summary.queue = self.queue.counts()
            self.log(f"storm ends: {self.queue.counts_text(self.summary.queue)}")
        return self.summary

    def _loop(self) -> None:
        limit = self.options.max_passes
        while not self.control.stop.is_set():
            self.control.wake.clear()
            self._settle_finished()
            if limit is not None and self.summary.passes >= limit:
                if self.running:
                    self.log(f"{limit} passes done: waiting for running lanes")
                return
            step = self._pass()
            if step == END or self.control.stop.is_set():
                return
            if step == WAIT:
                self.control.wake.wait(self.options.poll_s)
            elif step == FULL:
                self.control.wake.wait()  # nothing can start before a lane ends


def run_storm(
    options: StormOptions, deps: StormDeps, control: StormControl | None = None
) -> StormSummary:
    """Work the queue until it is empty (`once`), `max_passes` passes, or a stop."""
    if options.poll_s <= 0:
        raise BadInput(f"--poll must be more than 0 seconds, not {options.poll_s:g}")
    if options.max_passes is not None and options.max_passes < 1:
        raise BadInput(f"--max-passes must be at least 1, not {options.max_passes}")
    if not 0 <= options.stop_grace_s <= MAX_STOP_GRACE_S:
        grace = options.stop_grace_s
        raise BadInput(f"the stop grace must be 0 to {MAX_STOP_GRACE_S:g} seconds, not {grace:g}")
    return Storm(options, deps, control or StormControl()).run()
