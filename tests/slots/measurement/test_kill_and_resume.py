"""`slots calibrate` killed (SIGKILL) in its third step resumes on the next run without
measuring the first two again. What is tested is the sweep's checkpoint and resume, so it runs
on the simulated runner; kill -9 of a calibration on the real embedded runner, then reruns, is
tests/stress/test_stress_crash_resume.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.support.corpus import TINY_WINDOW, calibrate_command, tiny_corpus
from tests.support.ports import free_port
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.state import StateLayout

# every step lasts at least this long: long enough for the third to be seen and killed
STEP_S = 1.0


def _simulated_work_dir(folder: Path) -> Path:
    work = folder / "cwd"
    work.mkdir()
    (work / "vibey-gh.toml").write_text(
        "[local_models]\n"
        + f'runner = "simulated"\nwindow = {TINY_WINDOW}\ncalibration_port = {free_port()}\n'
        + f'production_url = "http://127.0.0.1:{free_port()}"\n'
    )
    return work


def _calibrate_cmd(corpus_path: Path) -> list[str]:
    return calibrate_command(
        corpus_path, 8, "--min-step-seconds", str(STEP_S), "--max-step-seconds", str(STEP_S)
    )


def test_kill_during_third_step_resumes_without_measuring_the_first_two_again(
    tmp_path: Path, isolated_state: Path
) -> None:
    _, corpus_path = tiny_corpus(tmp_path)
    work = _simulated_work_dir(tmp_path)
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(isolated_state)}
    layout = StateLayout(isolated_state)
    first = subprocess.Popen(
        _calibrate_cmd(corpus_path), cwd=work, env=env, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    checkpoint_steps: list[dict] = []
    while time.monotonic() < deadline:
        checkpoints = list(layout.progress.glob("*.json"))
        if checkpoints:
            checkpoint_steps = json.loads(checkpoints[0].read_text())["steps"]
            third = list(layout.runs.glob("*/step-02-n2-a1/turns.jsonl"))
            if len(checkpoint_steps) == 2 and third:
                break
        assert first.poll() is None, first.stderr.read() if first.stderr else ""
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert len(checkpoint_steps) == 2
    rerun = subprocess.run(
        _calibrate_cmd(corpus_path), cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    assert rerun.returncode == 0, rerun.stderr
    assert "resuming: 2 completed step(s)" in rerun.stderr
    # the sweep ends with what `slots allowed` answers now, and the line that would use it
    lines = rerun.stdout.splitlines()
    assert lines[-3] == "allowed now: 1 — declared 1 (concurrent_runs = 1)"
    assert lines[-2].startswith("the evidence supports ")
    assert lines[-2].endswith(f"put this line under [local_models] in {work / 'vibey-gh.toml'}:")
    assert lines[-1] == '  concurrent_runs = "measured"'
    evidence_files = list(layout.evidence.glob("*.json"))
    assert len(evidence_files) == 1
    steps = load_evidence(evidence_files[0]).steps
    assert [s.slots for s in steps] == [1, 1, 2]
    assert [s.started_at for s in steps[:2]] == [s["started_at"] for s in checkpoint_steps]
    run_dirs = sorted(layout.runs.iterdir())
    assert len(run_dirs) == 2
    assert sorted(p.name for p in run_dirs[1].iterdir() if p.is_dir()) == ["step-02-n2-a1"]
