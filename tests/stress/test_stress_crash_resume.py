"""kill -9 of `slots calibrate` at seeded random moments, then rerun until the sweep is done:
the final evidence must hold the same steps as an uninterrupted sweep, every rerun must
complete or be killed (never fail), and nothing may be left behind. bench/crash_resume.py runs
the same with ten kills and prints what happened."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner
from stress_support import (
    OneSlotBaseline,
    assert_state_readable,
    calibrate_argv,
    cli_env,
    config_toml,
    micro_config,
    micro_corpus,
    temp_leftovers,
)

from vibey_gh.cli.main import cli
from vibey_gh.files import TEMP_PREFIX, atomic_write_json
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.state import StateLayout

SEED = 20260924
KILLS = 3
SLOTS = "1,2"


def _served_by_step(evidence: Path) -> list[tuple[int, frozenset[str]]]:
    return [
        (step.slots, frozenset(t.turn_id for t in step.turns if t.result.served))
        for step in load_evidence(evidence).steps
    ]


def _runner_processes(port: int) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "vibey_gh.runners.llamacpp.embedded" in cmdline and str(port) in cmdline:
            found.append(process)
    return found


def _wait_for_no_runner(port: int, timeout_s: float = 30.0) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout_s
    while (left := _runner_processes(port)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.mark.integration
@pytest.mark.timeout(420)
def test_kill_nine_at_random_moments_then_rerun_gives_the_uninterrupted_steps(
    tmp_path: Path, isolated_state: Path
) -> None:
    _, corpus_path = micro_corpus(tmp_path)
    config = micro_config()
    Path("vibey-gh.toml").write_text(config_toml(config))
    argv = calibrate_argv(corpus_path, SLOTS)

    reference_state = tmp_path / "reference"
    started = time.monotonic()
    reference = subprocess.run(
        argv, env=cli_env(reference_state), capture_output=True, text=True, timeout=300
    )
    sweep_seconds = time.monotonic() - started
    assert reference.returncode == 0, reference.stderr
    (reference_evidence,) = StateLayout(reference_state).evidence.glob("*.json")

    layout = StateLayout(isolated_state)
    moments = random.Random(SEED)
    history: list[str] = []
    for _ in range(KILLS):
        moment = moments.uniform(0.2, sweep_seconds)
        run = subprocess.Popen(
            argv, env=cli_env(isolated_state), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            code = run.wait(timeout=moment)
        except subprocess.TimeoutExpired:
            run.send_signal(signal.SIGKILL)
            run.wait()
            history.append(f"killed at {moment:.1f}s")
            continue
        finally:
            assert run.stderr is not None
            stderr = run.stderr.read().decode()
            run.stderr.close()
        assert code == 0, f"a rerun failed instead of completing: {stderr}"
        history.append(f"finished before {moment:.1f}s")
        break
    else:
        final = subprocess.run(
            argv, env=cli_env(isolated_state), capture_output=True, text=True, timeout=300
        )
        assert final.returncode == 0, (history, final.stderr)

    (evidence,) = layout.evidence.glob("*.json")
    assert _served_by_step(evidence) == _served_by_step(reference_evidence), history
    for step in load_evidence(evidence).steps:
        turn_ids = [t.turn_id for t in step.turns]
        assert len(turn_ids) == len(set(turn_ids)) == step.corpus_turns
    assert not list(layout.progress.glob("*.json")), "the finished sweep dropped its checkpoint"
    assert_state_readable(layout)
    assert _wait_for_no_runner(config.calibration_port) == [], "no orphaned runner survives"


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_a_kill_right_after_the_runner_starts_leaves_nothing_the_rerun_trips_on(
    tmp_path: Path, isolated_state: Path
) -> None:
    _, corpus_path = micro_corpus(tmp_path)
    config = micro_config()
    Path("vibey-gh.toml").write_text(config_toml(config))
    argv = calibrate_argv(corpus_path, SLOTS, "--max-runs", "1")
    run = subprocess.Popen(argv, env=cli_env(isolated_state), stderr=subprocess.DEVNULL)
    try:
        calibration = psutil.Process(run.pid)
        deadline = time.monotonic() + 120
        while not calibration.children() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert calibration.children(), "the calibration started its runner"
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    try:
        rerun = subprocess.run(
            argv, env=cli_env(isolated_state), capture_output=True, text=True, timeout=240
        )
        assert rerun.returncode == 0, rerun.stderr
    finally:
        for orphan in _runner_processes(config.calibration_port):
            orphan.kill()


@pytest.mark.integration
def test_a_rerun_removes_the_temp_files_a_kill_left_mid_write(
    one_slot_baseline: OneSlotBaseline, layout: StateLayout
) -> None:
    checkpoint = one_slot_baseline.install(layout)
    data = json.loads(checkpoint.read_text())
    data["steps"].append({**data["steps"][0], "index": 1, "slots": 2})
    atomic_write_json(checkpoint, data)
    # what a kill between mkstemp and rename leaves: a half-written temp file per folder
    for folder in (layout.progress, layout.evidence):
        (folder / f"{TEMP_PREFIX}killed.part").write_text('{"schema_version": 1, "ste')
    config = micro_config()
    Path("vibey-gh.toml").write_text(config_toml(config))
    result = CliRunner().invoke(
        cli,
        ["slots", "calibrate", "--corpus", str(one_slot_baseline.corpus_path)]
        + ["--window", "1024", "--slots", "1,2", "--max-tokens", "8"],
    )
    assert result.exit_code == 0, result.output
    assert temp_leftovers(layout.root) == []
