"""A trace corpus calibrated on the simulated runner waits each turn's recorded tool time."""

from __future__ import annotations

import json
from pathlib import Path

from msgspec.structs import replace

from tests.support.progress import Recorder
from tests.support.simulated import MAX_TOKENS, simulated_config
from vibey_gh.composition import build_environment
from vibey_gh.interfaces.think import ThinkAsked
from vibey_gh.slots.corpus.corpus import build_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout

WINDOW = 1024


def trace(folder: Path) -> Path:
    requests = [
        {"t": 0.0, "type": "n", "in": 64 * n, "out": 8, "hash_ids": list(range(1, n + 1)),
         "think_time": 0.25 * (n % 3)}
        for n in (2, 4, 6, 8)
    ]  # fmt: skip
    path = folder / "trace.json"
    path.write_text(json.dumps({"id": "t1", "block_size": 64, "requests": requests}))
    return path


def test_each_turn_waits_the_trace_think_time_and_answers_within_its_out(
    tmp_path: Path, layout: StateLayout
) -> None:
    pool = build_pool(PoolSources(from_traces=[trace(tmp_path)], fit="scale"), window=WINDOW)
    corpus = build_corpus(pool, window=WINDOW, segments_per_stratum=1, shape="runs")
    recorded = {turn.id: turn.think_s for turn in corpus.turns()}
    assert sorted(set(recorded.values())) == [0.0, 0.25, 0.5]
    # a run waits 1.25 s of think time: a step's cap must leave it the time to complete
    config = replace(
        simulated_config(max_step_seconds=2.0), think=ThinkAsked.parse("recorded", 60.0)
    )
    req = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=WINDOW,
        max_tokens=MAX_TOKENS,
        slots=(1, 1),
        out_dir=tmp_path / "out",
    )
    run_calibration(req, build_environment(config, layout), Recorder(), lambda: config)
    (written,) = (tmp_path / "out").glob("slots-*.json")
    steps = json.loads(written.read_text())["steps"]
    assert len(steps) == 2 and all(step["turns"] for step in steps)
    for step in steps:
        for turn in step["turns"]:
            assert turn.get("think_s", 0.0) == recorded[turn["turn_id"]]
            assert turn["result"]["output_tokens"] <= 8


def test_a_trace_runs_shared_prefix_shows_as_cached_tokens_in_the_evidence(
    tmp_path: Path, layout: StateLayout
) -> None:
    pool = build_pool(PoolSources(from_traces=[trace(tmp_path)], fit="scale"), window=WINDOW)
    corpus = build_corpus(pool, window=WINDOW, segments_per_stratum=1, shape="runs")
    config = simulated_config(max_step_seconds=2.0)  # a run's 1.25 s of think time fits
    req = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=WINDOW,
        max_tokens=MAX_TOKENS,
        slots=(1, 1),
        out_dir=tmp_path / "out",
    )
    run_calibration(req, build_environment(config, layout), Recorder(), lambda: config)
    (written,) = (tmp_path / "out").glob("slots-*.json")
    for step in json.loads(written.read_text())["steps"]:
        by_index = {}
        for turn in step["turns"]:
            by_index.setdefault(int(turn["turn_id"].rsplit("#", 1)[1]), turn["result"])
        # Each request repeats the blocks of the one before: its slot still holds them.
        assert by_index[0]["cached_tokens"] < by_index[0]["prompt_tokens"] / 10
        for index in (1, 2, 3):
            result = by_index[index]
            assert result["cached_tokens"] >= 0.5 * result["prompt_tokens"]
