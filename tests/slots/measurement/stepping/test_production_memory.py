"""Memory charged for production at N: samples, step figures, the judge, the fit check."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.clocks import ManualClock
from tests.support.rendering import report_of
from tests.support.slot_builders import GB, make_step, same_answers
from vibey_gh.errors import Refused
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.samples import GpuMemory, MemorySample
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.interfaces.slots_interface import ProductionState
from vibey_gh.platforms.device.footprint import FootprintReading
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.judging.metrics import step_metrics
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.measurement.stepping.production_memory import (
    FootprintSummary,
    charge_sample,
    check_fits_beside_production,
    footprint_sampler,
)
from vibey_gh.slots.measurement.stepping.sampler import StepSampler


def sample(wired: int | None, gpus: tuple[GpuMemory, ...] = ()) -> MemorySample:
    return MemorySample(0.0, wired, wired, 24 * GB, 0.5, 0, 0, gpus)


def l4(index: int, used: int | None, total: int = 24 * GB) -> GpuMemory:
    return GpuMemory(index, "NVIDIA L4", used, total)


def test_a_sample_is_charged_without_productions_host_and_gpu_memory() -> None:
    held = FootprintReading(6 * GB, {0: 10 * GB, 1: None}, "pid 1 listens on port 8080")
    charged = charge_sample(sample(20 * GB, (l4(0, 18 * GB), l4(1, 5 * GB))), held)
    assert (charged.wired_bytes, charged.used_bytes) == (14 * GB, 14 * GB)
    # GPU 1: NVML could not say what production holds there, so all of it is charged
    assert [g.used_bytes for g in charged.gpus] == [8 * GB, 5 * GB]


def test_an_unidentified_production_charges_everything() -> None:
    raw = sample(20 * GB, (l4(0, 18 * GB),))
    assert charge_sample(raw, FootprintReading(None, None, "nothing listens")) == raw
    assert charge_sample(raw, None) == raw


def test_charged_memory_never_goes_below_zero() -> None:
    assert charge_sample(sample(GB), FootprintReading(2 * GB, None, "x")).wired_bytes == 0


def test_the_summary_keeps_the_most_production_held_and_every_account() -> None:
    summary = FootprintSummary()
    summary.add(FootprintReading(3 * GB, {0: GB, 1: 2 * GB}, "pid 7 listens on port 8080"))
    summary.add(FootprintReading(4 * GB, {0: None, 1: GB}, "pid 7 listens on port 8080"))
    summary.add(FootprintReading(None, None, "no process listens on port 8080"))
    assert summary.host_bytes == 4 * GB
    assert summary.gpu_tuple() == (None, 2 * GB)
    assert summary.how == "pid 7 listens on port 8080; then no process listens on port 8080"
    assert FootprintSummary().how is None and FootprintSummary().gpu_tuple() is None


def test_not_watching_production_reads_nothing() -> None:
    read, summary = footprint_sampler(None)
    assert read() is None and summary.how is None


def _charged_step(raw_gb: float, production_gb: float | None) -> StepRecord:
    step = make_step(2, 2, same_answers(), wired_gb=raw_gb)
    production = None if production_gb is None else int(production_gb * GB)
    timeline = tuple((*point, production, None) for point in step.timeline)
    return replace(
        step,
        timeline=timeline,
        production_footprint_bytes=production,
        production_footprint="pid 9 listens on port 8080",
    )


def test_step_figures_peak_is_charged_and_the_raw_peak_is_kept() -> None:
    metrics = step_metrics(_charged_step(21.0, 6.0))
    assert metrics.peak_wired_bytes == 15 * GB
    assert metrics.peak_raw_wired_bytes == 21 * GB


def test_the_judge_holds_the_charged_peak_against_the_ceiling() -> None:
    bounds = Bounds()  # ceiling 0.8 x 24 GB = 19.2 GB
    one = [make_step(i, 1, same_answers(), wired_gb=5.0) for i in range(2)]
    beside = judge_sweep([*one, _charged_step(21.0, 6.0)], bounds).verdicts[-1]
    assert not any("wired" in b for b in beside.broken)
    unknown = judge_sweep([*one, _charged_step(21.0, None)], bounds).verdicts[-1]
    assert unknown.broken[0] == "peak wired 21.00 GB above the ceiling 19.20 GB"


def test_old_evidence_without_production_fields_loads_and_judges_as_before() -> None:
    steps = [make_step(i, n, same_answers(), wired_gb=20.5) for i, n in enumerate((1, 1, 2))]
    old = []
    for step in steps:
        data = as_json(step)
        for key in ("production_footprint_bytes", "production_gpu_bytes", "production_footprint"):
            del data[key]
        old.append(checked(data, StepRecord))
    assert old[2].production_footprint_bytes is None and old[2].production_gpu_bytes is None
    before = judge_sweep(steps, Bounds())
    after = judge_sweep(old, Bounds())
    assert [v.to_json() for v in after.verdicts] == [v.to_json() for v in before.verdicts]
    assert after.verdicts[2].label == "breaks memory"


def test_step_record_round_trips_production_fields() -> None:
    step = replace(
        _charged_step(10.0, 2.0), production_gpu_bytes=(3 * GB, None), production_footprint="x"
    )
    again = checked(json.loads(json.dumps(as_json(step))), StepRecord)
    assert again.production_gpu_bytes == (3 * GB, None)
    assert again.production_footprint_bytes == 2 * GB and again.production_footprint == "x"
    with pytest.raises(ValueError, match="production_gpu_bytes"):
        checked({**as_json(step), "production_gpu_bytes": ["lots"]}, StepRecord)


class Memory:
    def __init__(self, samples: list[MemorySample]) -> None:
        self.samples = samples

    def sample(self) -> MemorySample:
        return self.samples.pop(0)


class Idle:
    def poll(self) -> ProductionState:
        return ProductionState(reachable=True, busy=False, models=("m",))


def test_the_sampler_feeds_the_bounds_charged_figures_and_records_raw_ones(
    tmp_path: Path,
) -> None:
    readings = [
        FootprintReading(5 * GB, {0: 12 * GB}, "pid 3 listens on port 8080", (3,)),
        FootprintReading(6 * GB, {0: 12 * GB}, "pid 3 listens on port 8080", (3,)),
    ]
    source = iter(readings)
    read, summary = footprint_sampler(type("Source", (), {"read": lambda self: next(source)})())
    seen: list[MemorySample] = []
    sampler = StepSampler(
        memory=Memory([sample(9 * GB, (l4(0, 16 * GB),)), sample(11 * GB, (l4(0, 18 * GB),))]),
        production=Idle(),
        log_events=lambda: [],
        runner_pid=lambda: os.getpid(),
        samples_path=tmp_path / "samples.jsonl",
        clock=ManualClock(epoch=1.0),
        on_tick=seen.append,
        footprint=read,
    )
    sampler.tick()
    sampler.tick()
    assert [s.wired_bytes for s in seen] == [4 * GB, 5 * GB]  # the early memory stop's view
    assert sampler.peak_wired == 5 * GB
    assert [p[1] for p in sampler.timeline] == [9 * GB, 11 * GB]  # raw kept
    assert [p[8] for p in sampler.timeline] == [5 * GB, 6 * GB]
    assert [p[9] for p in sampler.timeline] == [4 / 24, 6 / 24]
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert lines[1]["memory"]["wired_bytes"] == 11 * GB
    assert lines[1]["charged"] == {
        "wired_bytes": 5 * GB,
        "used_bytes": 5 * GB,
        "gpus_used_bytes": [6 * GB],
    }
    assert lines[1]["production_footprint"]["gpu_bytes"] == {"0": 12 * GB}
    assert summary.host_bytes == 6 * GB and summary.gpu_tuple() == (12 * GB,)


def test_a_model_that_cannot_fit_beside_production_is_refused_naming_the_remedy() -> None:
    held = FootprintReading(GB, {0: 20 * GB}, "pid 3 listens on port 8080")
    gpus = (l4(0, 22 * GB),)
    with pytest.raises(Refused) as refused:
        check_fits_beside_production(held, sample(8 * GB, gpus), 4 * GB, "qwen.gguf")
    message = str(refused.value)
    assert message.startswith("the calibration model qwen.gguf (4.00 GB) cannot fit beside")
    assert "2.00 GB of GPU memory is free" in message
    assert "holds 20.00 GB on GPU 0" in message
    assert "stop the production runner for the calibration" in message


def test_fit_check_passes_when_there_is_room_or_nothing_to_judge() -> None:
    held = FootprintReading(GB, {0: 10 * GB, 1: 0}, "x")
    two = (l4(0, 22 * GB), l4(1, 1 * GB))
    check_fits_beside_production(held, sample(GB, two), 4 * GB, "m")  # split over both GPUs
    tight = (l4(0, 22 * GB),)
    check_fits_beside_production(FootprintReading(GB, {0: 0}, "x"), sample(GB, tight), 4 * GB, "m")
    check_fits_beside_production(held, sample(GB, tight), None, "m")  # size unknown (Ollama)
    check_fits_beside_production(FootprintReading(None, None, "x"), sample(GB, tight), GB, "m")


def test_the_report_shows_what_production_held_raw_and_charged() -> None:
    from tests.support.evidence import synthetic_evidence

    one = [make_step(i, 1, same_answers(), wired_gb=5.0) for i in range(2)]
    beside = replace(_charged_step(21.0, 6.0), production_gpu_bytes=(2 * GB, None))
    report = report_of(synthetic_evidence([*one, beside]), Bounds())
    assert "Memory is charged for production at N" in report
    assert "| 6.00 GB | 2.00 GB, unknown | 21.00 GB | 15.00 GB |" in report
    assert "- pid 9 listens on port 8080" in report
    assert "charged for production" not in report_of(synthetic_evidence(one), Bounds())
