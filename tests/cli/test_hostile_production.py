"""Whatever listens on production's port cannot make a command crash, hang or lie: deep JSON,
NaN, a 300 MB body, a drip of one byte at a time and bytes that are no HTTP all read as
"production did not say", and `slots allowed` still answers a number with exit 0."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import Result

from tests.support.fixtures import RunCli
from tests.support.hostile import HOSTILE_KINDS, cut_drips_short, hostile_production
from vibey_gh.cli.entry import main as entry_main

# A status GET is cut off after a second; a command asks production a few times.
COMMAND_SECONDS = 30.0
RUNNERS = {"llama-server": "default", "ollama": "qwen3:8b"}


@pytest.fixture(autouse=True)
def _drips_cut_short(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if "drip" in request.node.name:
        cut_drips_short(monkeypatch)


def use_production(url: str, runner: str = "llama-server") -> None:
    Path("vibey-gh.toml").write_text(
        "[local_models]\n"
        'concurrent_runs = "measured"\n'
        f'runner = "{runner}"\n'
        f'model = "{RUNNERS[runner]}"\n'
        f'production_url = "{url}"\n',
        encoding="utf-8",
    )


def assert_no_crash(result: Result, started: float) -> None:
    """One clear outcome: no exception but click's exit, no traceback, in bounded time."""
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert "RecursionError" not in result.output
    assert time.monotonic() - started < COMMAND_SECONDS


@pytest.mark.parametrize("runner", list(RUNNERS))
@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_allowed_answers_one_with_exit_0(run_cli: RunCli, kind: str, runner: str) -> None:
    with hostile_production(kind) as production:
        use_production(production.url, runner)
        started = time.monotonic()
        result = run_cli(["slots", "allowed", "--json"])
    assert_no_crash(result, started)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["allowed"] == 1
    assert answer["reason_code"] == "production_unreachable"
    assert production.url in answer["reason"]


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_allowed_openmetrics_still_prints_its_gauges(run_cli: RunCli, kind: str) -> None:
    with hostile_production(kind) as production:
        use_production(production.url)
        started = time.monotonic()
        result = run_cli(["slots", "allowed", "--format", "openmetrics"])
    assert_no_crash(result, started)
    assert result.exit_code == 0, result.output
    assert "vibey_gh_slots_allowed" in result.output
    assert result.output.rstrip().endswith("# EOF")


@pytest.mark.parametrize(
    "command",
    [["doctor"], ["doctor", "--json"], ["slots", "show"], ["slots", "apply"]],
    ids=["doctor", "doctor-json", "show", "apply"],
)
@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_other_commands_say_what_production_did(
    run_cli: RunCli, kind: str, command: list[str]
) -> None:
    with hostile_production(kind) as production:
        use_production(production.url)
        started = time.monotonic()
        result = run_cli(command)
    assert_no_crash(result, started)
    assert result.exit_code in (0, 1), result.output
    assert result.output.strip()


def test_deep_json_is_named_as_such(run_cli: RunCli) -> None:
    with hostile_production("deep") as production:
        use_production(production.url)
        result = run_cli(["slots", "allowed", "--json"])
    reason = json.loads(result.output)["reason"]
    assert f"unusable answer from {production.url}/props" in reason
    assert "nested more than 64 levels deep" in reason


def make_queue(folder: Path, specs: int) -> Path:
    (folder / "repo").mkdir()
    (folder / "repo" / "a.py").write_text("x = 1\n", encoding="utf-8")
    pending = folder / "queue" / "pending"
    pending.mkdir(parents=True)
    for index in range(specs):
        (pending / f"s{index}.toml").write_text(
            f'id = "s{index}"\ntitle = "S"\ntask = "Read."\n'
            'repository = "../../repo"\nfiles = ["a.py"]\n',
            encoding="utf-8",
        )
    return folder / "queue"


# A drip holds a lane's turn until the turn's own timeout (600 s), like any slow answer; the
# storm's passes past it are shown with an empty queue below.
@pytest.mark.parametrize("kind", [kind for kind in HOSTILE_KINDS if kind != "drip"])
def test_a_storm_goes_on_past_a_hostile_production(
    run_cli: RunCli, tmp_path: Path, kind: str
) -> None:
    queue = make_queue(tmp_path, 2)
    with hostile_production(kind) as production:
        use_production(production.url)
        started = time.monotonic()
        result = run_cli(["storm", "run", str(queue), "--max-passes", "3", "--poll", "0.1"])
    assert_no_crash(result, started + 60.0)
    assert result.exit_code == 0, result.output
    for number in (1, 2, 3):
        assert f"pass {number}: allowed 1 — production runner: " in result.output
    # the lanes ran against that production and failed with its reply named, one at a time
    assert sorted(p.name for p in (queue / "pending").iterdir()) == []
    assert len(list((queue / "failed").glob("*.toml"))) == 2


def test_a_storm_keeps_passing_while_production_drips(run_cli: RunCli, tmp_path: Path) -> None:
    queue = make_queue(tmp_path, 0)
    with hostile_production("drip") as production:
        use_production(production.url)
        started = time.monotonic()
        result = run_cli(["storm", "run", str(queue), "--max-passes", "3", "--poll", "0.1"])
    assert_no_crash(result, started)
    assert result.exit_code == 0, result.output
    for number in (1, 2, 3):
        assert f"pass {number}: allowed 1 — production runner: no answer from" in result.output


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_the_executable_s_fast_path_answers_too(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with hostile_production(kind) as production:
        use_production(production.url)
        assert entry_main(["slots", "allowed", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["allowed"], answer["reason_code"]) == (1, "production_unreachable")
