"""The step sampler: one durable line per tick, production changes, calibration evictions."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.clocks import ManualClock
from vibey_gh.interfaces.slots_interface import MemorySample, ProductionState
from vibey_gh.slots.measurement.stepping.sampler import StepSampler, process_tree_rss


class Scripted:
    """Answers from a list, one per call (the last repeats)."""

    def __init__(self, answers: list) -> None:
        self.answers = answers

    def next(self):  # type: ignore[no-untyped-def]
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


class Memory(Scripted):
    def sample(self) -> MemorySample:
        return self.next()  # type: ignore[no-any-return]


class Watch(Scripted):
    def poll(self) -> ProductionState:
        return self.next()  # type: ignore[no-any-return]


def memory(t: float, wired: int, swap_out: int) -> MemorySample:
    return MemorySample(t, wired, wired, 100, 0.5, 0, swap_out)


def test_ticks_record_memory_production_and_evictions(tmp_path: Path) -> None:
    idle = ProductionState(reachable=False, busy=False, reason="no answer")
    loaded = ProductionState(reachable=True, busy=False, models=("smollm2",))
    holding = ProductionState(reachable=True, busy=False, models=("m",))
    empty = ProductionState(reachable=True, busy=False, models=())
    sampler = StepSampler(
        memory=Memory([memory(0, 10, 0), memory(1, 30, 5), memory(2, 20, 9)]),
        production=Watch([idle, loaded, loaded]),
        log_events=lambda: [],
        runner_pid=lambda: os.getpid(),
        samples_path=tmp_path / "samples.jsonl",
        clock=ManualClock(epoch=1.0),
        calibration=Watch([holding, holding, empty]),
    )
    for _ in range(3):
        sampler.tick()
    lines = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == 3
    assert lines[1]["calibration"] == {"models": ["m"]}
    assert sampler.peak_wired == 30
    assert [p[5] for p in sampler.timeline] == [0, 5, 9]
    assert all(p[6] and p[6] > 0 for p in sampler.timeline), "the runner tree's RSS is read"
    record = sampler.production_record()
    assert record.model_appeared and not record.clean
    assert (record.polls, record.unreachable_polls) == (3, 1)
    assert [e.kind for e in sampler.events] == ["eviction"]
    assert "no longer holds m" in sampler.events[0].text


def test_process_tree_rss_of_a_missing_process_is_none() -> None:
    assert process_tree_rss(None) is None
    assert process_tree_rss(2**22 + 12345) is None


def test_with_sensors_each_tick_also_holds_its_named_readings(tmp_path: Path) -> None:
    from vibey_gh.interfaces.readings import Reading, SensorReport

    class Hot:
        def read(self) -> SensorReport:
            return SensorReport({"thermal.x86_pkg_temp_c": Reading(71.0, "C")})

    idle = ProductionState(reachable=False, busy=False, reason="no answer")
    sampler = StepSampler(
        memory=Memory([memory(0, 10, 0)]),
        production=Watch([idle]),
        log_events=lambda: [],
        runner_pid=lambda: os.getpid(),
        samples_path=tmp_path / "samples.jsonl",
        clock=ManualClock(epoch=1.0),
        sensors=Hot(),
    )
    sampler.tick()
    (line,) = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert line["readings"]["thermal.x86_pkg_temp_c"] == {"value": 71.0, "unit": "C"}
    assert line["readings"]["host.wired_bytes"]["value"] == 10
    assert line["readings"]["runner.rss_bytes"]["value"] > 0
    assert line["memory"]["wired_bytes"] == 10, "the memory sample keeps its own format"
