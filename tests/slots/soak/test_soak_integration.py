"""A soak of seconds on the real embedded llama.cpp runner (integration)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.ports import free_port
from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.slots.evidence.soak_file import load_soak
from vibey_gh.slots.judging.readings.drift import VERDICTS
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.slots.soak.request import SoakRequest
from vibey_gh.slots.soak.soak import run_soak
from vibey_gh.state import StateLayout

pytestmark = pytest.mark.integration


class Quiet:
    def message(self, text: str) -> None:
        return


def test_a_short_embedded_soak_records_its_turns_and_readings(
    tmp_path: Path, layout: StateLayout
) -> None:
    # one segment: a replay takes every segment at least once, and a busy machine serves a
    # real model's turns slowly
    full, _ = tiny_corpus(tmp_path)
    corpus = replace(full, segments=full.segments[:1])
    config = LocalModels(
        runner="embedded", window=TINY_WINDOW, calibration_port=free_port(),
        production_url=f"http://127.0.0.1:{free_port()}",
    )  # fmt: skip
    request = SoakRequest(
        CalibrationRequest(config, corpus, TINY_WINDOW, 4), duration_s=10.0, slots=1
    )
    outcome = run_soak(request, build_environment(config, layout), Quiet(), lambda: config)
    assert outcome.complete and outcome.path is not None
    record = load_soak(outcome.path)
    assert record.verdict in VERDICTS
    assert len(record.series) == 2  # windows of 5 s, the shortest a soak takes
    # a loaded machine may serve a real model's turn more slowly than a window lasts: the
    # raw turns are what the windows are counted from
    turns = Path(record.data["runs_dir"], "turns.jsonl").read_text().splitlines()
    results = [json.loads(line)["turn"]["result"] for line in turns]
    assert any(r["status"] == 200 and r["error"] is None for r in results)
    rss = [w["readings"]["runner.rss_bytes"]["mean"] for w in record.series]
    assert all(value > 50e6 for value in rss), "the model is resident in the runner"
