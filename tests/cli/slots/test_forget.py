"""`vibey-gh slots forget --checkpoints`: the checkpoints doctor lists, removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.progress import Quiet
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.state import StateLayout


def test_forget_removes_the_checkpoints_doctor_lists(
    tmp_path: Path, layout: StateLayout, run_cli: Any
) -> None:
    config = simulated_config(min_step_seconds=0.2, max_step_seconds=2.0)
    _, paused = calibrate(tmp_path, layout, config, Quiet(), max_runs=1)
    (checkpoint,) = layout.progress.glob("*.json")
    other = run_cli(["slots", "forget", "--checkpoints", "--fingerprint", "0" * 16])
    assert other.exit_code == 0 and other.output == "no checkpoint to remove\n"
    assert checkpoint.exists()
    result = run_cli(["slots", "forget", "--checkpoints", "--json"])
    assert result.exit_code == 0, result.output
    (removed,) = json.loads(result.output)["removed"]
    assert removed["path"] == str(checkpoint) and removed["steps"] == 1
    assert removed["fingerprint"] == paused.fingerprint
    assert not checkpoint.exists()
    assert list(layout.evidence.glob("*.json")), "evidence is never forgotten"


def test_forget_without_what_is_bad_input(run_cli: Any) -> None:
    result = run_cli(["slots", "forget"])
    assert result.exit_code == 2
    assert result.stderr == "error: say what to forget: --checkpoints\n"
