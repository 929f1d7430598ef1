"""`vibey-gh lane run`: bad input, an unreachable production runner, the model lock."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from vibey_gh.cli.main import cli
from vibey_gh.lanes.records import read_record
from vibey_gh.state import StateLayout
from vibey_gh.storm.lock import model_lock


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n", encoding="utf-8")
    path = tmp_path / "lane.toml"
    path.write_text(
        'id = "cli-lane"\ntitle = "CLI lane"\ntask = "Read a.py."\n'
        'repository = "repo"\nfiles = ["a.py"]\n',
        encoding="utf-8",
    )
    Path("vibey-gh.toml").write_text(
        f'[local_models]\nproduction_url = "http://127.0.0.1:{closed_port()}"\n',
        encoding="utf-8",
    )
    return path


def lane(*args: str) -> Result:
    return CliRunner().invoke(cli, ["lane", "run", *args])


def test_help_has_examples() -> None:
    result = lane("--help")
    assert result.exit_code == 0 and "Examples:" in result.output
    assert "vibey-gh lane run specs/state-layout.toml" in result.output


def test_a_missing_spec_is_bad_input(tmp_path: Path) -> None:
    result = lane(str(tmp_path / "nope.toml"))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: spec file not found: {tmp_path}/nope.toml"
    ]


def test_a_missing_repository_is_bad_input(tmp_path: Path, spec: Path) -> None:
    spec.write_text(spec.read_text().replace('"repo"', '"gone"'), encoding="utf-8")
    result = lane(str(spec))
    assert result.exit_code == 2 and "repository folder not found" in result.output
    assert not list(StateLayout.from_env().lanes.iterdir()), "nothing recorded for bad input"


def test_bad_numbers_are_bad_input(spec: Path) -> None:
    assert lane(str(spec), "--max-turns", "0").exit_code == 2
    assert lane(str(spec), "--retries", "-1").exit_code == 2


def test_an_unreachable_production_runner_fails_the_lane_on_record(spec: Path) -> None:
    result = lane(str(spec), "--json")
    assert result.exit_code == 1
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "failed" and "connection failed" in outcome["error"]
    record_path = Path(outcome["record"])
    assert record_path.parent.parent == StateLayout.from_env().lanes
    record = read_record(record_path)
    assert record.status == "failed" and len(record.of_kind("turn")) == 1


def test_the_plain_output_names_the_record(spec: Path) -> None:
    result = lane(str(spec))
    assert result.exit_code == 1
    assert "lane cli-lane-" in result.stderr and ": failed after 1 turns" in result.stderr
    assert "record: " in result.stderr


def test_no_wait_refuses_while_a_calibration_holds_the_model(spec: Path) -> None:
    with model_lock(StateLayout.from_env(), exclusive=True, role="calibration"):
        result = lane(str(spec), "--no-wait")
    assert result.exit_code == 1
    assert "error: the model lock is held by calibration pid" in result.output
