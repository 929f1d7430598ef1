"""What a calibration is given and what it answers: the request, the injected world, the outcome.

The sweep driver (`calibrate.py`), the start checks (`calibration_start.py`) and the evidence
writer (`evidence_writer.py`) all speak these; keeping them here lets each import them without
importing the driver.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ...clock import Clock
from ...config import LocalModels
from ...errors import BadInput
from ...interfaces.readings import SensorSource
from ...interfaces.slots_interface import DeviceFacts, RunnerInfo
from ...interfaces.think import ThinkAsked
from ...runners.contract import ProductionWatch
from ...runners.logscan import LogTail
from ...state import StateLayout
from ..corpus.corpus import Corpus
from ..evidence.fingerprint import Fingerprint, compute_fingerprint
from ..evidence.history import ListedSweep
from ..judging.records import LogEventRecord
from .stepping.production_memory import FootprintSource
from .stepping.step import LogSource


class CalibrationRequest(msgspec.Struct, frozen=True):
    """Everything a calibration needs, resolved by the caller (CLI or storm)."""

    config: LocalModels
    corpus: Corpus
    window: int
    max_tokens: int
    slots: tuple[int, ...] | None = None
    max_runs: int | None = None
    max_slots: int = 16
    if_requested: bool = False
    out_dir: Path | None = None
    threads: int | None = None
    request_timeout_s: float = 600.0
    # off: every step replays the whole corpus even once its verdict is certain (for
    # measuring what early verdicts save); the memory ceiling still stops a step at once
    early_verdicts: bool = True
    # seconds to wait for production to unload its models before the first step and before
    # each re-measure; None: refuse at once when it holds one (re-measures wait IDLE_WAIT_S)
    wait_idle_s: float | None = None
    # discard this device and corpus's checkpoints (measured with other options) and start over
    restart: bool = False
    # the split-window what-if: turns deeper than the window are sent and counted as refused
    # (never cut); written to --out only, never recorded as evidence
    split_window: bool = False
    # the wait before each turn as the command line asked it, over the config's think_time
    # and think_cap (nothing asked: the config's)
    think: ThinkAsked = ThinkAsked()

    def __post_init__(self) -> None:
        check_wait_idle(self.wait_idle_s)


def check_wait_idle(seconds: float | None) -> None:
    """--wait-idle waits 0 or more seconds (NaN is no wait at all)."""
    if seconds is not None and not seconds >= 0:
        raise BadInput(f"--wait-idle takes 0 or more seconds, not {seconds:g}")


class Environment(msgspec.Struct, frozen=True):
    """The parts of the world a calibration touches, injected."""

    layout: StateLayout
    clock: Clock
    device: DeviceFacts
    production_identity: Callable[[], RunnerInfo]
    production: ProductionWatch
    memory: Any  # HostMemorySampler
    runner: Any  # Runner
    log_source: LogSource
    calibration_watch: Callable[[str], ProductionWatch] | None = None
    # the calibration runner's identity from its binary and the model store (None: the same
    # as production's, as for the embedded runner)
    calibration_identity: Callable[[], RunnerInfo] | None = None
    # what production reveals of its settings that differs from the config, in words
    production_drift: Callable[[], list[str]] | None = None
    # what production holds (left out of the charged memory), and the calibration model's
    # file size (for the fit check before the first step); None: not watched / unknown
    production_footprint: FootprintSource | None = None
    calibration_model_bytes: Callable[[], int | None] | None = None
    # readings beyond memory (temperatures, power, clocks, throttling) for a soak; None: none
    sensors: SensorSource | None = None
    # the evidence's own fingerprint, unless a test replaces it
    fingerprint_of: Callable[[DeviceFacts, RunnerInfo, int], Fingerprint] = compute_fingerprint


def log_source(log_path: Path, runner_kind: str) -> Callable[[], list[LogEventRecord]]:
    """New events of the runner's log since the last call, as evidence records (the log source
    of a calibration on this machine)."""
    tail = LogTail(log_path, runner_kind)

    def new_events() -> list[LogEventRecord]:
        return [
            LogEventRecord(kind=e.kind, text=e.text, values=dict(e.values))
            for e in tail.new_events()
        ]

    return new_events


class CalibrationOutcome(msgspec.Struct, frozen=True):
    """What a calibration ended with, as a command answers it (`--json`, written by
    `as_json`)."""

    fingerprint: str
    ideal: int | None
    reason: str
    recorded: bool
    complete: bool
    evidence: Path | None
    out_files: tuple[Path, ...] = ()
    new_steps: int = 0
    resumed_steps: int = 0
    stop_reason: str | None = None
    skipped: bool = False
    version_mismatch: str | None = None
    production_absent: str | None = None
    # what the answer rests on (`judging.verdicts.VERDICT_CODES`); None with no step measured
    verdict_code: str | None = None
    # the evidence this sweep replaced (now in the history), or the complete evidence that a
    # paused sweep left in place; other_corpus: that evidence was measured on another corpus
    replaced: ListedSweep | None = None
    kept: ListedSweep | None = None
    other_corpus: bool = False

    def evidence_change_lines(self) -> list[str]:
        """What became of the evidence that was there: replaced (and kept in the history), or
        left answering because a paused sweep never replaces a complete one."""
        other = " — measured on another corpus than this sweep's" if self.other_corpus else ""
        if self.replaced is not None:
            return [
                f"replaced {self.replaced.described}{other}; kept in {self.replaced.path} "
                "(`vibey-gh slots show --history` lists the sweeps kept)"
            ]
        if self.kept is not None:
            return [
                f"kept {self.kept.described}{other} as this device's evidence: a paused sweep "
                "never replaces a complete one; this sweep's steps are in its checkpoint, and "
                "the same command continues it"
            ]
        return []


class AnswerAfter(CalibrationOutcome, frozen=True):
    """A sweep that ran, with what `slots allowed` answers after it (None for a what-if)."""

    after: dict[str, Any] | None = None


class SkippedSweep(msgspec.Struct, frozen=True):
    """A sweep skipped before any corpus was read."""

    fingerprint: str
    skipped: bool
    reason: str
