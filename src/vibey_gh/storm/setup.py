"""What a storm is set up with: its options, the control its signal handlers share, the world it
touches (built from the composition root), its log and the summary it returns."""

from __future__ import annotations

import functools
import hashlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..clock import Clock
from ..composition import real_collaborators
from ..config import LocalModels, load_config
from ..files import append_line_durably
from ..lanes.client import STOP_GRACE_S, ChatClient, cancel_production_requests
from ..lanes.loop import LaneOptions
from ..slots.gate.allowed import AllowedAnswer
from ..slots.measurement.options import parse_slots
from ..state import StateLayout
from .calibration import CalibrationPlan, IdleRun, calibrate_idle
from .queue import DONE, FAILED, PENDING
from .soaking import soak_idle

if TYPE_CHECKING:
    from ..composition import Collaborators

LOG_FILE = "storm.log"
# What follows a pass: poll again later, wait for a lane to end, pass again now, or stop.
WAIT, FULL, AGAIN, END = "wait", "full", "again", "end"
DEFAULT_POLL_S = 30.0
DEFAULT_STOP_GRACE_S = STOP_GRACE_S  # then the lanes' turns in flight are cancelled


class StormOptions(msgspec.Struct, frozen=True):
    queue: Path
    once: bool = False
    max_passes: int | None = None
    poll_s: float = DEFAULT_POLL_S
    lane: LaneOptions = msgspec.field(default_factory=LaneOptions)
    max_tokens: int | None = None
    calibration: CalibrationPlan = msgspec.field(default_factory=CalibrationPlan)
    stop_grace_s: float = DEFAULT_STOP_GRACE_S

    @classmethod
    def of_flags(
        cls,
        queue: Path,
        once: bool,
        max_passes: int | None,
        poll_s: float,
        max_turns: int,
        retries: int,
        max_tokens: int | None,
        no_calibrate: bool,
        calibration_slots: str | None,
        calibration_max_tokens: int | None,
        calibration_max_runs: int | None,
        calibration_segments: int,
        calibration_segment_turns: int,
        calibration_shape: str | None,
        min_lane_turns: int,
        threads: int | None,
    ) -> StormOptions:
        """The options of `storm run`'s flags: its lanes', and its idle calibrations'."""
        return cls(
            queue=queue,
            once=once,
            max_passes=max_passes,
            poll_s=poll_s,
            lane=LaneOptions(max_turns=max_turns, retries=retries),
            max_tokens=max_tokens,
            calibration=CalibrationPlan(
                slots=parse_slots(calibration_slots),
                max_tokens=calibration_max_tokens,
                segments_per_stratum=calibration_segments,
                segment_turns=calibration_segment_turns,
                min_lane_turns=min_lane_turns,
                max_runs=calibration_max_runs,
                threads=threads,
                enabled=not no_calibrate,
                shape=calibration_shape,
            ),
        )


@dataclass
class StormControl:
    """Shared with the signal handlers: `stop` asks for a clean stop; `calibrating` tells a
    handler that a stop must interrupt a calibration instead of waiting for it."""

    stop: threading.Event = field(default_factory=threading.Event)
    wake: threading.Event = field(default_factory=threading.Event)
    calibrating: bool = False

    def request_stop(self) -> None:
        self.stop.set()
        self.wake.set()


Calibrate = Callable[[IdleRun], Any]


class StormDeps(msgspec.Struct, frozen=True):
    """The world the storm touches, injectable for tests."""

    layout: StateLayout
    clock: Clock
    load_config: Callable[[], LocalModels]
    decide: Callable[[LocalModels], AllowedAnswer]
    client_for: Callable[[LocalModels], ChatClient]
    calibrate: Calibrate
    echo: Callable[[str], None]
    # a requested soak in idle time (storm.soaking.soak_idle; None: never)
    soak: Callable[..., Any] | None = None
    # cancel the lanes' requests in flight to production; how many (a stop past its grace)
    cancel_requests: Callable[[LocalModels], int] = cancel_production_requests


def default_deps(
    echo: Callable[[str], None], collaborators: Collaborators | None = None
) -> StormDeps:
    """The storm's world from the composition root's collaborators (default: the real ones)."""
    parts = collaborators or real_collaborators()
    return StormDeps(
        layout=parts.layout(),
        clock=parts.clock,
        load_config=load_config,
        decide=parts.decide_allowed,
        client_for=parts.production_client,
        calibrate=functools.partial(calibrate_idle, environment=parts.calibration_environment),
        echo=echo,
        soak=functools.partial(soak_idle, environment=parts.calibration_environment),
    )


@dataclass
class StormSummary:
    passes: int = 0
    started: int = 0
    settled: dict[str, int] = field(default_factory=lambda: {DONE: 0, FAILED: 0, PENDING: 0})
    calibrations: list[dict[str, object]] = field(default_factory=list)
    stopped: bool = False
    log: Path | None = None
    records: Path | None = None
    queue: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """What `storm run` prints once it ends."""
        return [
            f"storm: {self.started} lanes started, {self.settled[DONE]} done, "
            f"{self.settled[FAILED]} failed, {self.settled[PENDING]} back to pending; "
            f"queue now {self.queue}",
            f"log: {self.log}",
        ]

    def answer(self) -> StormAnswer:
        """What `slots storm` answers, the lanes counted by how they ended."""
        return StormAnswer(
            self.passes, self.started, self.settled[DONE], self.settled[FAILED],
            self.settled[PENDING], self.calibrations, self.stopped, self.log, self.records,
            self.queue,
        )  # fmt: skip


class StormAnswer(msgspec.Struct, frozen=True):
    """`slots storm --json` (written by `as_json`)."""

    passes: int
    lanes_started: int
    lanes_done: int
    lanes_failed: int
    lanes_interrupted: int  # back to pending
    calibrations: list[dict[str, object]]
    stopped: bool
    log: Path | None
    records: Path | None
    queue: dict[str, int]


def storm_folder(layout: StateLayout, queue_root: Path) -> Path:
    """`lanes/storm-<queue name>-<8 hex of its path>`: one per queue folder."""
    resolved = str(queue_root.resolve())
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", queue_root.resolve().name) or "queue"
    digest = hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:8]
    return layout.lanes / f"storm-{slug}-{digest}"


class StormLog:
    """Timestamped lines in storm.log (appended and fsynced), echoed to stderr."""

    def __init__(self, path: Path, clock: Clock, echo: Callable[[str], None]) -> None:
        self.path, self.clock, self.echo = path, clock, echo
        self._lock = threading.Lock()

    def __call__(self, message: str) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.clock.now()))
        with self._lock:
            append_line_durably(self.path, f"{stamp} {message}")
        self.echo(message)
