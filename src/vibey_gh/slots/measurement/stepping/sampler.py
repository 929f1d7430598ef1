"""The 1 Hz background sampler of a step: host memory, the runner's RSS, production, the log.

Each tick appends one JSON line to samples.jsonl as it goes (so a crash keeps what was seen),
adds a point to the step's timeline, counts production polls, and collects new log events.
`on_tick` may ask to end the step (the memory ceiling): the sampler then calls `abort`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import psutil
from msgspec.structs import asdict

from ....clock import Clock
from ....files import append_line_durably
from ....interfaces.readings import Reading, SensorSource, sample_of
from ....interfaces.schema import as_json
from ....interfaces.slots_interface import HostMemorySampler, MemorySample
from ....runners.contract import ProductionWatch
from ...judging.records import LogEventRecord, ProductionRecord
from .production_memory import ProductionHeld, charge_sample


def process_tree_rss(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
        return int(sum(p.memory_info().rss for p in tree))
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def gpu_used_share(sample: MemorySample) -> float | None:
    shares = [
        g.used_bytes / g.total_bytes
        for g in sample.gpus
        if g.used_bytes is not None and g.total_bytes
    ]
    return max(shares) if shares else None


class Ticking:
    """Ticks at once, then every `interval_s` seconds on a daemon thread named `name`, and once
    more when stopped: a step's (or a soak's) first reading is taken before any request is
    sent, and its last after the last answer."""

    def __init__(self, interval_s: float, name: str) -> None:
        self.interval_s = interval_s
        self._name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        self.tick()
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.tick()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.tick()


class StepSampler(Ticking):
    def __init__(
        self,
        memory: HostMemorySampler,
        production: ProductionWatch,
        log_events: Callable[[], list[LogEventRecord]],
        runner_pid: Callable[[], int | None],
        samples_path: Path,
        clock: Clock,
        interval_s: float = 1.0,
        on_tick: Callable[[MemorySample], None] | None = None,
        calibration: ProductionWatch | None = None,
        footprint: Callable[[], ProductionHeld | None] | None = None,
        sensors: SensorSource | None = None,
    ) -> None:
        super().__init__(interval_s, "step-sampler")
        # the platform's readings beyond memory, written beside the memory sample (None: none)
        self._sensors = sensors
        # production's footprint, left out of the charged figures (None: not watched)
        self._footprint = footprint
        self._calibration = calibration
        self._calibration_models: set[str] | None = None
        self._memory = memory
        self._production = production
        self._log_events = log_events
        self._runner_pid = runner_pid
        self._path = samples_path
        self._clock = clock
        self._on_tick = on_tick
        self.timeline: list[tuple[float | None, ...]] = []
        self.events: list[LogEventRecord] = []
        self.latest: MemorySample | None = None
        self.peak_wired: int | None = None
        self._polls = self._busy = self._unreachable = 0
        self._models: list[str] = []
        self._initial_models: tuple[str, ...] | None = None
        self._appeared = False
        self._version: str | None = None

    def tick(self) -> None:
        sample = self._memory.sample()
        footprint = self._footprint() if self._footprint is not None else None
        charged = charge_sample(sample, footprint)
        rss = process_tree_rss(self._runner_pid())
        state = self._production.poll()
        self._polls += 1
        if not state.reachable:
            self._unreachable += 1
        if state.busy:
            self._busy += 1
        if state.version:
            self._version = state.version
        models = tuple(sorted(state.models))
        if self._initial_models is None:
            self._initial_models = models
        elif set(models) - set(self._initial_models):
            self._appeared = True
        for name in models:
            if name not in self._models:
                self._models.append(name)
        new_events = self._log_events()
        held = self._calibration.poll() if self._calibration is not None else None
        if held is not None and held.reachable:
            held_now = set(held.models)
            if self._calibration_models and not held_now >= self._calibration_models:
                gone = ", ".join(sorted(self._calibration_models - held_now))
                new_events.append(
                    LogEventRecord("eviction", f"the calibration runner no longer holds {gone}")
                )
            self._calibration_models = held_now
        self.events.extend(new_events)
        point = (
            sample.t,
            sample.wired_bytes,
            sample.used_bytes,
            sample.free_share,
            sample.swap_in_bytes,
            sample.swap_out_bytes,
            rss,
            gpu_used_share(sample),
            None if footprint is None else footprint.host_bytes,
            None if footprint is None else gpu_used_share(charged),
        )
        self.timeline.append(point)
        # the bounds see what production at N would hold: production's footprint left out
        self.latest = charged
        if charged.wired_bytes is not None:
            self.peak_wired = max(self.peak_wired or 0, charged.wired_bytes)
        line: dict[str, object] = {
            "t": sample.t,
            "wall": self._clock.now(),
            "memory": asdict(sample),
            "runner_rss_bytes": rss,
            "production_footprint": None if footprint is None else as_json(footprint),
            "charged": None
            if footprint is None
            else {
                "wired_bytes": charged.wired_bytes,
                "used_bytes": charged.used_bytes,
                "gpus_used_bytes": [g.used_bytes for g in charged.gpus],
            },
            "production": {"busy": state.busy, "reachable": state.reachable, "models": models},
            "calibration": None if held is None else {"models": sorted(held.models)},
            "log_events": [as_json(e) for e in new_events],
        }
        if self._sensors is not None:
            # one tick as named readings: the memory sample above keeps its own format
            rss_missing = None if rss is not None else "the runner's process is gone"
            rss_reading = Reading(None if rss is None else float(rss), "B", rss_missing)
            ticked = sample_of(sample, {"runner.rss_bytes": rss_reading})
            line["readings"] = as_json(ticked.with_report(self._sensors.read()))["readings"]
        append_line_durably(self._path, json.dumps(line, default=str))
        if self._on_tick is not None:
            self._on_tick(charged)

    def production_record(self) -> ProductionRecord:
        return ProductionRecord(
            polls=self._polls,
            busy_polls=self._busy,
            unreachable_polls=self._unreachable,
            models_seen=tuple(self._models),
            model_appeared=self._appeared,
            version=self._version,
        )
