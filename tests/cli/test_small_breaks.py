"""Small breaks of the first hour, each fixed: a reader that went away, brackets in
progress messages, options without help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


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
    assert done.returncode == 0, "quietly, as `head` and the slots allowed fast path do"


def test_show_as_markdown_into_a_closed_pipe_exits_0(tmp_path: Path) -> None:
    """`vibey-gh slots show --format markdown | head`: a pipeline under `set -o pipefail`
    must not fail because its reader stopped early."""
    from tests.support.evidence import RECORDED, RECORDED_FINGERPRINT

    state = tmp_path / "state"
    (state / "evidence").mkdir(parents=True)
    (state / "evidence" / f"{RECORDED_FINGERPRINT}.json").write_bytes(RECORDED.read_bytes())
    read_end, write_end = os.pipe()
    os.close(read_end)
    done = subprocess.run(
        [sys.executable, "-m", "vibey_gh", "slots", "show", RECORDED_FINGERPRINT],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env={**os.environ, "VIBEY_GH_SLOTS_DIR": str(state)},
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    os.close(write_end)
    assert (done.returncode, done.stderr.decode()) == (0, "")


def test_live_progress_prints_brackets_as_written(capsys: Any) -> None:
    """rich markup would eat "[embedded]" from pip install 'vibey-gh[embedded]'."""
    from vibey_gh.slots.measurement.live_progress import LiveProgress

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
