"""A calibration of whole runs with their think time, on the simulated runner: it waits the
recorded tool time, is decided on runs per hour, records its shape and policy, and never
resumes a checkpoint of another think-time policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.progress import Recorder
from tests.support.simulated import simulated_config
from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.interfaces.think import ThinkAsked, ThinkMode, ThinkPolicy
from vibey_gh.slots.corpus.corpus import Corpus, build_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.work import GAINS_KEY, THINK_LAW
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_method import check_turns_fit_a_step
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome, CalibrationRequest
from vibey_gh.state import StateLayout

WINDOW = 1024
THINK_S = 0.05


def timed_runs(folder: Path) -> Corpus:
    """Eight two-turn transcripts whose tool result came THINK_S after the first answer."""
    lines = []
    for run in range(8):
        messages = [
            {"role": "user", "content": f"task {run}", "timestamp": 100.0},
            {"role": "assistant", "content": "reading", "timestamp": 101.0},
            {"role": "tool", "content": f"file {run}", "timestamp": 101.0 + THINK_S},
            {"role": "assistant", "content": "done", "timestamp": 102.0},
        ]
        lines.append(json.dumps({"id": f"run-{run}", "messages": messages}))
    path = folder / "sessions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pool = build_pool(PoolSources(from_transcripts=[path]))
    return build_corpus(pool, window=WINDOW, segments_per_stratum=8, shape="runs")


def calibrate(
    corpus: Corpus, config: LocalModels, layout: StateLayout, **request: object
) -> CalibrationOutcome:
    req = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=WINDOW,
        max_tokens=12,
        **{"slots": (1, 1, 2), **request},
    )
    env = build_environment(config, layout)
    return run_calibration(req, env, Recorder(), bounds_source=lambda: config)


def quick() -> LocalModels:
    return simulated_config(min_step_seconds=0.5, max_step_seconds=3.0, tokens_per_second=2000.0)


def test_whole_runs_wait_their_tool_time_and_are_decided_on_runs_per_hour(
    tmp_path: Path, layout: StateLayout
) -> None:
    corpus = timed_runs(tmp_path)
    outcome = calibrate(corpus, quick(), layout)
    assert outcome.evidence is not None
    evidence = load_evidence(outcome.evidence)
    assert evidence.document.corpus["shape"] == "runs"
    assert evidence.document.method["think"] == {"think_time": "recorded", "think_cap_s": 60.0}
    assert {step.shape for step in evidence.steps} == {"runs"}
    waited = [t.think_s for step in evidence.steps for t in step.turns if t.turn_id.endswith("#1")]
    assert waited and all(abs(think - THINK_S) < 1e-9 for think in waited)
    verdicts = evidence.document.verdicts
    assert {v["decided_by"] for v in verdicts} == {"runs/h"}
    one = verdicts[0]["metrics"]
    # with think time the gains are read by the closed-system law, each turn's response time
    # against its one-slot time, so the noise is resampled by turn: the "batches" are the
    # corpus's turns served
    assert all((step.measurement or {}).get(GAINS_KEY) == THINK_LAW for step in evidence.steps)
    turns = {t.turn_id for t in evidence.steps[0].turns}
    # a one-slot run stops at its first look once enough distinct runs were served
    assert one["window_runs"] >= 5 and 5 <= one["run_batches"] <= len(turns)
    assert one["capacity_gain"] is not None
    # a run: two turns and the tool time between them
    assert one["run_p50_s"] > THINK_S
    assert "runs/h" in outcome.reason or outcome.ideal == 1


def test_a_checkpoint_of_another_think_policy_is_never_resumed(
    tmp_path: Path, layout: StateLayout
) -> None:
    corpus = timed_runs(tmp_path)
    # one pass a step: what is tested is which checkpoint is resumed, not what a step decides
    config = replace(quick(), min_step_seconds=0.1, max_step_seconds=0.5)
    first = calibrate(corpus, config, layout, max_runs=1)
    assert (first.new_steps, first.complete) == (1, False)
    # another think policy is named, and nothing measured is discarded without --restart
    with pytest.raises(BadInput, match="think_time recorded → none"):
        calibrate(corpus, replace(config, think=ThinkAsked.parse("none", 60.0)), layout, max_runs=1)
    same = calibrate(corpus, config, layout, max_runs=1)
    assert same.resumed_steps == 1
    other = calibrate(
        corpus,
        replace(config, think=ThinkAsked.parse("none", 60.0)),
        layout,
        max_runs=1,
        restart=True,
    )
    assert other.resumed_steps == 0


def test_a_run_may_outlast_a_step_but_a_single_wait_may_not(tmp_path: Path) -> None:
    corpus = timed_runs(tmp_path)
    config = simulated_config(min_step_seconds=0.5, max_step_seconds=1.0)
    req = CalibrationRequest(config=config, corpus=corpus, window=WINDOW, max_tokens=12)
    # two turns of 0.6 s each: the run waits 1.2 s, more than the cap, and is judged turn by turn
    check_turns_fit_a_step(req, ThinkPolicy(ThinkMode.FIXED, 0.6))
    with pytest.raises(BadInput, match="could never complete inside a step"):
        check_turns_fit_a_step(req, ThinkPolicy(ThinkMode.FIXED, 1.0))
