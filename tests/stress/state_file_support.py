"""Valid evidence and checkpoint documents to break, and how `allowed`, `show` and `calibrate`
are asked to read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import Result
from fuzz_support import assert_clean_outcome, invoke
from stress_support import MICRO_WINDOW, OneSlotBaseline, config_toml, micro_config, port_held

from vibey_gh.state import StateLayout

EVIDENCE_NAME_ELSEWHERE = "0000000000000000.json"


def two_step_evidence(baseline: OneSlotBaseline) -> dict[str, Any]:
    """The baseline's evidence with a second step at two slots (a relabelled copy)."""
    data: dict[str, Any] = json.loads(baseline.evidence)
    data["steps"].append({**data["steps"][0], "index": 1, "slots": 2})
    return data


def write_measured_config() -> None:
    """vibey-gh.toml in the cwd declaring "measured", so `allowed` reads the evidence."""
    Path("vibey-gh.toml").write_text(config_toml(micro_config()))


def todays_evidence(state: Path, baseline: OneSlotBaseline) -> Path:
    return StateLayout(state).evidence / baseline.evidence_name


def checkpoint_path(state: Path, baseline: OneSlotBaseline) -> Path:
    return StateLayout(state).progress / baseline.checkpoint_name


def allowed_answer() -> dict[str, Any]:
    """`slots allowed --json`, which must answer (exit 0) whatever it read."""
    result = invoke(["slots", "allowed", "--json"])
    assert_clean_outcome(result)
    assert result.exit_code == 0, "allowed always answers"
    answer: dict[str, Any] = json.loads(result.stdout)
    assert isinstance(answer["allowed"], int) and answer["allowed"] >= 1
    assert isinstance(answer["reason"], str) and answer["reason"]
    return answer


def show(*flags: str) -> Result:
    """`slots show`: it shows, or says in one line why it cannot (exit 1 or 2)."""
    result = invoke(["slots", "show", *flags])
    assert_clean_outcome(result, error_codes=(1, 2))
    return result


def calibrate_resuming(baseline: OneSlotBaseline) -> Result:
    """`slots calibrate` of the baseline sweep, with its calibration port held by this test:
    a checkpoint that still reads as valid resumes and stops there (exit 2), so no runner is
    ever started."""
    config = micro_config()
    Path("vibey-gh.toml").write_text(config_toml(config))
    args = ["slots", "calibrate", "--corpus", str(baseline.corpus_path)]
    args += ["--window", str(MICRO_WINDOW), "--slots", "1,2", "--max-tokens", "8"]
    with port_held(config.calibration_port):
        return invoke(args)
