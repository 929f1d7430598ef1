"""`vibey-gh slots forget --checkpoints`, and `doctor` into a reader that went away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def test_doctor_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    """`vibey-gh doctor | head -1`: the reader leaves before doctor is done writing."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(tmp_path / "state")}
    done = subprocess.run(
        [sys.executable, "-m", "vibey_gh.cli.main", "doctor"],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    os.close(write_end)
    assert done.stderr.decode() == "", "no 'error: Broken pipe'"
    assert done.returncode == 1, "quietly, as click and the slots allowed fast path do"


def test_live_progress_prints_brackets_as_written(capsys: Any) -> None:
    """rich markup would eat "[embedded]" from pip install 'vibey-gh[embedded]'."""
    from vibey_gh.cli.progress import LiveProgress

    progress = LiveProgress()
    progress.message("install it: pip install 'vibey-gh[embedded]'")
    progress.close()
    assert "pip install 'vibey-gh[embedded]'" in capsys.readouterr().err


def test_storm_options_all_have_help(run_cli: Any) -> None:
    result = run_cli(["storm", "run", "--help"])
    assert result.exit_code == 0
    for option in ("--max-turns", "--retries"):
        line = next(line for line in result.output.splitlines() if option in line)
        assert len(line.split(option, 1)[1].strip()) > len("INTEGER RANGE"), option
