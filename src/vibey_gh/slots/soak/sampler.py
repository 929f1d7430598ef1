"""The readings of each soak tick: memory (production's part apart), swap, the runner's
resident memory, the platform's sensors; and whether production was busy.

Each tick is one `ReadingSample`, appended to the soak's `readings.jsonl` as it is taken (with
the turns that ended since the last tick), so a crash keeps what was seen.
"""

from __future__ import annotations

from collections.abc import Callable

from ...clock import Clock
from ...interfaces.readings import Reading, ReadingSample, SensorSource, missing, sample_of
from ...interfaces.slots_interface import HostMemorySampler
from ...runners.contract import ProductionWatch
from ..measurement.stepping.production_memory import FootprintSource, charge_sample
from ..measurement.stepping.sampler import Ticking, process_tree_rss
from .journal import SoakJournal


class SoakSampler(Ticking):
    def __init__(
        self,
        journal: SoakJournal,
        span: int,
        memory: HostMemorySampler,
        sensors: SensorSource | None,
        production: ProductionWatch,
        runner_pid: Callable[[], int | None],
        clock: Clock,
        footprint: FootprintSource | None = None,
        interval_s: float = 1.0,
        on_tick: Callable[[ReadingSample], None] | None = None,
    ) -> None:
        self.journal, self.span = journal, span
        self.memory, self.sensors, self.production = memory, sensors, production
        self.runner_pid, self.clock, self.footprint = runner_pid, clock, footprint
        super().__init__(interval_s, "soak-sampler")
        self.on_tick = on_tick
        self.latest: ReadingSample | None = None
        self.polls = self.busy_polls = 0

    def tick(self) -> None:
        memory = self.memory.sample()
        extra: dict[str, Reading] = {}
        held = self.footprint.read() if self.footprint is not None else None
        if held is not None:
            charged = charge_sample(memory, held)
            extra["charged.wired_bytes"] = (
                Reading(float(charged.wired_bytes), "B", None, "wired, production's part apart")
                if charged.wired_bytes is not None
                else missing(charged.missing.get("wired_bytes", "not read"), "B")
            )
        rss = process_tree_rss(self.runner_pid())
        extra["runner.rss_bytes"] = (
            Reading(float(rss), "B", None, "the calibration runner's process tree")
            if rss is not None
            else missing("the runner's process is gone or not readable", "B")
        )
        state = self.production.poll()
        self.polls += 1
        self.busy_polls += 1 if state.busy else 0
        extra["production.busy"] = Reading(
            1.0 if state.busy else 0.0, "", None, "production held a model (shares the machine)"
        )
        sample = sample_of(memory, extra)
        if self.sensors is not None:
            sample = sample.with_report(self.sensors.read())
        self.latest = sample
        self.journal.flush_turns()
        self.journal.add_reading(self.span, self.clock.now(), sample)
        if self.on_tick is not None:
            self.on_tick(sample)
