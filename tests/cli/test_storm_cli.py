"""`vibey-gh storm run`: bad input, an empty queue, a lane whose runner is not there."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from click.testing import CliRunner, Result

from vibey_gh.cli.main import cli


def storm(*args: str) -> Result:
    return CliRunner().invoke(cli, ["storm", "run", *args])


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def make_queue(tmp_path: Path, specs: int) -> Path:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("x = 1\n", encoding="utf-8")
    pending = tmp_path / "queue" / "pending"
    pending.mkdir(parents=True)
    for index in range(specs):
        (pending / f"s{index}.toml").write_text(
            f'id = "s{index}"\ntitle = "S"\ntask = "Read."\n'
            'repository = "../../repo"\nfiles = ["a.py"]\n',
            encoding="utf-8",
        )
    Path("vibey-gh.toml").write_text(
        f'[local_models]\nproduction_url = "http://127.0.0.1:{closed_port()}"\n',
        encoding="utf-8",
    )
    return tmp_path / "queue"


def test_help_has_examples() -> None:
    result = storm("--help")
    assert result.exit_code == 0 and "Examples:" in result.output
    assert "vibey-gh storm run ~/storm-queue --once" in result.output


def test_a_missing_queue_is_bad_input(tmp_path: Path) -> None:
    result = storm(str(tmp_path / "nowhere"), "--once")
    assert result.exit_code == 2
    assert result.output.startswith("error: no such queue folder: ")


def test_bad_options_are_bad_input(tmp_path: Path) -> None:
    queue = make_queue(tmp_path, 0)
    assert storm(str(queue), "--calibration-slots", "1,x").exit_code == 2
    assert storm(str(queue), "--poll", "0").exit_code == 2
    assert storm(str(queue), "--max-passes", "0").exit_code == 2


def test_an_empty_queue_once_ends_at_once_and_logs(tmp_path: Path) -> None:
    queue = make_queue(tmp_path, 0)
    result = storm(str(queue), "--once")
    assert result.exit_code == 0, result.output
    assert "storm: 0 lanes started" in result.stdout
    assert "pass 1: allowed 1 — declared 1 (concurrent_runs = 1)" in result.stderr
    log = Path(result.stdout.split("log: ", 1)[1].strip())
    assert "pass 1: allowed 1 — declared 1" in log.read_text(encoding="utf-8")
    assert sorted(p.name for p in queue.iterdir()) == ["done", "failed", "pending", "running"]


def test_a_lane_without_a_runner_lands_in_failed(tmp_path: Path) -> None:
    queue = make_queue(tmp_path, 1)
    result = storm(str(queue), "--once", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["lanes_failed"] == 1 and summary["lanes_started"] == 1
    assert summary["queue"] == {"pending": 0, "running": 0, "done": 0, "failed": 1}
    assert (queue / "failed" / "s0.toml").is_file()
    assert (queue / "failed" / "s0.toml.run.json").is_file()
