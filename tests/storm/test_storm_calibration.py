"""A storm's idle calibration replays its lanes as they ran: whole runs from its own lane
records, with the tool time they recorded, decided on runs per hour; segments from specs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus import TINY_WINDOW
from tests.support.simulated import simulated_config
from vibey_gh.composition import build_environment
from vibey_gh.lanes.tools import tool_definitions
from vibey_gh.slots.evidence.requests import write_request
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.measurement.calibration_start import identity_of_production
from vibey_gh.state import StateLayout
from vibey_gh.storm.calibration import CalibrationPlan, IdleRun, calibrate_idle, storm_corpus

TOOL_S = 0.05


def lane_records(root: Path, lanes: int = 4, turns: int = 3) -> Path:
    """What a storm's lanes write: each a run of `turns` turns, its tools taking TOOL_S between
    a reply and the next send (on the lane's monotonic clock)."""
    for lane in range(lanes):
        folder = root / f"run-{lane}"
        folder.mkdir(parents=True)
        messages = [
            {"role": "system", "content": "You read code."},
            {"role": "user", "content": f"Lane {lane}: what does a.py return?"},
        ]
        lines = [{"event": "start", "spec": f"lane{lane}", "t": 0.0, "mono": 0.0}]
        clock = 0.0
        for index in range(turns):
            payload = {"messages": list(messages), "tools": tool_definitions()}
            lines.append(
                {"event": "turn", "index": index, "t": clock, "mono": clock, "payload": payload}
            )
            clock += 0.2
            lines.append({"event": "reply", "index": index, "t": clock, "mono": clock})
            clock += TOOL_S
            messages += [
                {"role": "assistant", "content": f"Reading part {index}."},
                {"role": "user", "content": f"Part {index} says {index}."},
            ]
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (folder / "events.jsonl").write_text(text, encoding="utf-8")
    return root


def test_lane_records_give_whole_runs_with_their_tool_time(tmp_path: Path) -> None:
    records = lane_records(tmp_path / "lanes")
    plan = CalibrationPlan(min_lane_turns=4)
    corpus, origin = storm_corpus(records, tmp_path / "done", TINY_WINDOW, plan)
    assert origin.startswith("from its own lane records (12 turns)")
    assert corpus.shape == "runs"
    assert all(len(run.turns) == 3 for run in corpus.segments)
    waits = [turn.think_s for run in corpus.segments for turn in run.turns[1:]]
    assert waits and all(abs((w or 0.0) - TOOL_S) < 1e-9 for w in waits)


def test_the_plan_may_still_ask_for_segments(tmp_path: Path) -> None:
    records = lane_records(tmp_path / "lanes")
    plan = CalibrationPlan(min_lane_turns=4, shape="segments", segment_turns=1)
    corpus, _ = storm_corpus(records, tmp_path / "done", TINY_WINDOW, plan)
    assert corpus.shape == "segments"
    assert all(len(segment.turns) == 1 for segment in corpus.segments)


def test_an_idle_calibration_records_whole_runs_decided_on_runs_per_hour(
    tmp_path: Path, layout: StateLayout
) -> None:
    # steps of 0.3 s to 1 s hold runs of three turns by the dozen: what is read is what they
    # were decided on, not how precisely
    config = simulated_config(min_step_seconds=0.3, max_step_seconds=1.0, tokens_per_second=3000.0)
    records = lane_records(tmp_path / "lanes")
    env = build_environment(config, layout)
    identity, _ = identity_of_production(env)
    fingerprint = env.fingerprint_of(env.device, identity, config.window)
    write_request(layout, fingerprint.id, {}, "unmeasured", 0.0, {"runner": "simulated"})
    said: list[str] = []
    # answers short enough that every recorded turn keeps room for one in the tiny window
    plan = CalibrationPlan(slots=(1, 1, 2), min_lane_turns=4, max_tokens=64)
    outcome = calibrate_idle(
        IdleRun(config, layout, records, tmp_path / "done", plan, said.append),
        environment=lambda cfg, lay: build_environment(cfg, lay),
    )
    assert outcome.evidence is not None, said
    assert any("4 whole runs, 12 turns" in line for line in said), said
    evidence = load_evidence(outcome.evidence)
    assert evidence.data["corpus"]["shape"] == "runs"
    assert evidence.data["method"]["think"]["think_time"] == "recorded"
    judgement = judge_sweep(evidence.steps, config.bounds)
    assert judgement.figures.decided_by == "runs/h"
    assert all(v.metrics.runs_per_hour for v in judgement.verdicts)
