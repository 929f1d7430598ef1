"""Calibrating beside a real production runner that keeps its model loaded (integration).

Production is `vibey-gh runner serve` (the embedded runner, SmolLM2) with a large KV cache, so
its footprint stands well above this shared machine's own drift; the same short calibration
runs beside it and then with it stopped.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from msgspec.structs import replace
from test_calibrate_integration import MAX_TOKENS, embedded_config

from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.ports import free_port
from tests.support.progress import Recorder
from vibey_gh.composition import build_environment
from vibey_gh.errors import Refused
from vibey_gh.interfaces.samples import GpuMemory, MemorySample
from vibey_gh.interfaces.schema import checked
from vibey_gh.platforms.device.footprint import ProductionFootprint
from vibey_gh.platforms.device.probes import PlatformProbes, this_platform
from vibey_gh.platforms.nvidia import GpuProcesses
from vibey_gh.runners.registry import runner_kind, runner_markers
from vibey_gh.slots.judging.metrics import step_metrics
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout

pytestmark = pytest.mark.integration
EMBEDDED = runner_kind("embedded")
MB = 1_000_000
GB = 1_000_000_000
# 16 slots x 4096 tokens: a KV cache of ~1.5 GB that production holds for as long as it runs
PRODUCTION_SLOTS, PRODUCTION_WINDOW = 16, 4096
# other processes on a shared machine move its used memory by a few hundred MB between runs
MARGIN_SHARE = 0.35
FEW_TOKENS = 8


@dataclass(frozen=True)
class Production:
    port: int
    pid: int  # the runner process, serving the port


@contextmanager
def serving_production(tmp_path: Path) -> Iterator[Production]:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "vibey_gh.cli.main",
        "runner",
        "serve",
        "--runner",
        "embedded",
        "--slots",
        str(PRODUCTION_SLOTS),
        "--window",
        str(PRODUCTION_WINDOW),
        "--port",
        str(port),
        "--log",
        str(tmp_path / "production.log"),
        "--json",
    ]
    serve = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert serve.stdout is not None
        printed = ""
        for line in serve.stdout:  # one JSON object, once the model is loaded
            printed += line
            if line.startswith("}"):
                break
        facts = json.loads(printed)
        yield Production(port, int(facts["pid"]))
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)


def _calibrate(tmp_path: Path, production_port: int, name: str) -> list[StepRecord]:
    drawn, _ = tiny_corpus(tmp_path)
    corpus = replace(drawn, segments=drawn.segments[:2])  # the two shallowest: four turns
    config = embedded_config(production_port)
    layout = StateLayout(tmp_path / name)
    request = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=TINY_WINDOW,
        max_tokens=FEW_TOKENS,
        slots=(1, 2),
        out_dir=tmp_path / f"{name}-out",
    )
    outcome = run_calibration(request, build_environment(config, layout), Recorder())
    assert outcome.out_files, outcome.reason
    out = next(p for p in outcome.out_files if p.suffix == ".json")
    return [checked(s, StepRecord) for s in json.loads(out.read_text())["steps"]]


def _rest_of_machine(production_port: int) -> float:
    """The machine's wired memory without production's footprint and with no calibration
    runner: the median of five readings, taken right before a calibration. Other work on a
    shared machine moves it between the two calibrations; comparing peaks above it cancels
    that drift."""
    probes = PlatformProbes.detect()
    footprint = probes.production_footprint(
        f"http://127.0.0.1:{production_port}", EMBEDDED.default_port, EMBEDDED.process_names
    )
    readings = []
    for _ in range(5):
        wired = probes.memory.sample().wired_bytes
        assert wired is not None
        readings.append(wired - (footprint.read().host_bytes or 0))
        time.sleep(0.5)
    return statistics.median(readings)


@pytest.mark.timeout(1500)  # two calibrations; a busy two-core machine takes minutes
def test_charged_peak_beside_production_matches_the_peak_without_it(tmp_path: Path) -> None:
    with serving_production(tmp_path) as production:
        rest_beside = _rest_of_machine(production.port)
        beside = _calibrate(tmp_path, production.port, "beside")
    rest_alone = _rest_of_machine(production.port)
    alone = _calibrate(tmp_path, production.port, "alone")
    drift = rest_alone - rest_beside
    assert [s.slots for s in beside] == [s.slots for s in alone] == [1, 2]
    for with_production, without in zip(beside, alone, strict=True):
        held = with_production.production_footprint_bytes
        assert held is not None and held > 800 * MB, with_production.production_footprint
        how = with_production.production_footprint or ""
        assert f"listens on port {production.port}" in how and "left out" in how
        assert without.production_footprint_bytes is None
        assert "nothing left out" in (without.production_footprint or "")
        charged = step_metrics(with_production)
        reference = step_metrics(without)
        assert charged.peak_wired_bytes is not None and charged.peak_raw_wired_bytes is not None
        assert reference.peak_wired_bytes == reference.peak_raw_wired_bytes
        assert reference.peak_wired_bytes is not None
        margin = MARGIN_SHARE * held
        charged_peak = charged.peak_wired_bytes + drift
        raw_peak = charged.peak_raw_wired_bytes + drift
        print(
            f"N={with_production.slots}: production held {held / MB:.0f} MB; peak wired "
            f"raw {raw_peak / MB:.0f} MB, charged {charged_peak / MB:.0f} MB, without "
            f"production {reference.peak_wired_bytes / MB:.0f} MB (the rest of the machine "
            f"moved {drift / MB:+.0f} MB between the runs; margin ±{margin / MB:.0f} MB)"
        )
        assert abs(charged_peak - reference.peak_wired_bytes) <= margin
        assert abs(raw_peak - reference.peak_wired_bytes - held) <= margin


class RecordedGpu:
    """A GPU as NVML would list it with production's model on it (no NVIDIA GPU here)."""

    def __init__(self, production_pid: int, production_bytes: int, used: int, total: int):
        self.listed = GpuProcesses({0: {production_pid: production_bytes}})
        self.gpu = GpuMemory(0, "NVIDIA L4", used, total)

    def process_memory(self) -> GpuProcesses:
        return self.listed


class WithGpu:
    def __init__(self, host: object, gpu: GpuMemory) -> None:
        self.host, self.gpu = host, gpu

    def sample(self) -> MemorySample:
        return replace(self.host.sample(), gpus=(self.gpu,))  # type: ignore[attr-defined]


def test_a_model_that_cannot_fit_beside_production_stops_before_the_first_step(
    tmp_path: Path,
) -> None:
    corpus, _ = tiny_corpus(tmp_path)
    with serving_production(tmp_path) as production:
        config = embedded_config(production.port)
        layout = StateLayout(tmp_path / "state")
        gpu = RecordedGpu(production.pid, 23 * GB, used=int(23.95 * GB), total=24 * GB)
        real = build_environment(config, layout)
        env = replace(
            real,
            production_footprint=ProductionFootprint(
                f"http://127.0.0.1:{production.port}",
                EMBEDDED.default_port,
                EMBEDDED.process_names,
                runner_markers(),
                this_platform(),
                gpu,
            ),
            memory=WithGpu(real.memory, gpu.gpu),
        )
        recorder = Recorder()
        request = CalibrationRequest(
            config=config, corpus=corpus, window=TINY_WINDOW, max_tokens=MAX_TOKENS, slots=(1, 2)
        )
        with pytest.raises(Refused, match="cannot fit beside production") as refused:
            run_calibration(request, env, recorder)
    assert "holds 23.00 GB on GPU 0" in str(refused.value)
    assert recorder.started == []
    assert not layout.runs.exists() or not list(layout.runs.iterdir())
