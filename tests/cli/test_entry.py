"""The `vibey-gh` executable: `slots allowed` without click, and the same bytes as with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from vibey_gh.cli.entry import main, parse_allowed, split_global_config
from vibey_gh.cli.main import cli


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["slots", "allowed"], (None, None, False)),
        (["slots", "allowed", "--json"], (None, None, True)),
        (["slots", "allowed", "--model", "qwen3:8b"], ("qwen3:8b", None, False)),
        (["slots", "allowed", "--model=qwen3:8b", "--json"], ("qwen3:8b", None, True)),
        (["slots", "allowed", "--window", "32768"], (None, 32768, False)),
        (["slots", "allowed", "--json", "--window=256", "--model", "m"], ("m", 256, True)),
    ],
)
def test_plain_forms_take_the_fast_path(
    argv: list[str], parsed: tuple[str | None, int | None, bool]
) -> None:
    assert parse_allowed(argv) == parsed


@pytest.mark.parametrize(
    "argv",
    [
        ["slots", "allowed", "--help"],
        ["slots", "allowed", "-h"],
        ["--debug", "slots", "allowed"],
        ["slots", "allowed", "--window", "255"],
        ["slots", "allowed", "--window", str(1 << 25)],
        ["slots", "allowed", "--window", "+300"],
        ["slots", "allowed", "--window", "lots"],
        ["slots", "allowed", "--window"],
        ["slots", "allowed", "--model", "--json"],
        ["slots", "allowed", "--model="],
        ["slots", "allowed", "--model", "a", "--model", "b"],
        ["slots", "allowed", "--json", "--json"],
        ["slots", "allowed", "--mode", "a"],
        ["slots", "allowed", "extra"],
        ["slots", "allowed", "--"],
        ["slots", "show"],
        [],
    ],
)
def test_everything_else_goes_to_click(argv: list[str]) -> None:
    assert parse_allowed(argv) is None


MEASURED_WITHOUT_PRODUCTION = (
    "[local_models]\n"
    'concurrent_runs = "measured"\n'
    'runner = "llama-server"\n'
    'production_url = "http://127.0.0.1:9"\n'
)


@pytest.mark.parametrize(
    ("config", "argv"),
    [
        (None, ["slots", "allowed"]),
        (None, ["slots", "allowed", "--json"]),
        (MEASURED_WITHOUT_PRODUCTION, ["slots", "allowed"]),
        (MEASURED_WITHOUT_PRODUCTION, ["slots", "allowed", "--json", "--window=4096"]),
        (MEASURED_WITHOUT_PRODUCTION, ["slots", "allowed", "--model", "qwen3:8b", "--json"]),
        ("[local_models]\nconcurrent_runs = 0\n", ["slots", "allowed"]),
        ("[local_models]\nconcurrent_runs = 0\n", ["slots", "allowed", "--json"]),
        ("[local_models]\nwindow = 12\n", ["slots", "allowed", "--window", "4096"]),
    ],
)
def test_the_fast_path_prints_what_click_prints(
    config: str | None, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    if config is not None:
        Path("vibey-gh.toml").write_text(config)
    code = main(argv)
    fast = capsys.readouterr()
    through_click = CliRunner().invoke(cli, argv, prog_name="vibey-gh")
    assert (code, fast.out, fast.err) == (
        through_click.exit_code,
        through_click.stdout,
        through_click.stderr,
    )
    assert fast.out or fast.err


@pytest.mark.parametrize("as_json", [False, True])
def test_a_bad_config_answers_one_with_the_error_and_exit_0(
    as_json: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("vibey-gh.toml").write_text('[local_models]\nconcurrent_runs = "measurd"\n')
    assert main(["slots", "allowed", *(["--json"] if as_json else [])]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    if as_json:
        data = json.loads(out)
        assert (data["allowed"], data["reason_code"], data["schema_version"]) == (
            1,
            "config_error",
            1,
        )
        assert "concurrent_runs" in data["reason"] and data["declaration"] is None
    else:
        assert out.startswith("1 — config error: ") and "'measurd'" in out


def test_other_commands_keep_exiting_2_on_a_bad_config() -> None:
    Path("vibey-gh.toml").write_text('[local_models]\nconcurrent_runs = "measurd"\n')
    done = CliRunner().invoke(cli, ["slots", "show"], prog_name="vibey-gh")
    assert done.exit_code == 2
    assert done.stderr.startswith("error: ") and "concurrent_runs" in done.stderr


@pytest.mark.parametrize("form", [["--config", "lab.toml"], ["--config=lab.toml"]])
def test_a_global_config_file_is_used_on_the_fast_path_as_through_click(
    form: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    Path("lab.toml").write_text("[local_models]\nconcurrent_runs = 0\n")
    Path("vibey-gh.toml").write_text("[local_models]\nconcurrent_runs = 1\n")
    argv = [*form, "slots", "allowed", "--json"]
    assert split_global_config(argv) == ("lab.toml", ["slots", "allowed", "--json"])
    assert main(argv) == 0
    fast = capsys.readouterr()
    assert json.loads(fast.out)["reason_code"] == "config_error"  # lab.toml, not ./vibey-gh.toml
    os.environ.pop("VIBEY_GH_CONFIG")
    through_click = CliRunner().invoke(cli, argv, prog_name="vibey-gh")
    assert (fast.out, fast.err) == (through_click.stdout, through_click.stderr)


def test_a_missing_global_config_file_answers_one_and_names_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--config", "nowhere.toml", "slots", "allowed"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 — config error: config file ") and "nowhere.toml" in out


def run_entry(argv: list[str]) -> subprocess.CompletedProcess[str]:
    probe = (
        "import sys\n"
        "from vibey_gh.cli.entry import main\n"
        "try:\n"
        f"    code = main({argv!r})\n"
        "except SystemExit as done:\n"
        "    code = done.code\n"
        "print('click loaded' if 'click' in sys.modules else 'click not loaded', file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)


def test_a_plain_ask_never_loads_click() -> None:
    done = run_entry(["slots", "allowed", "--json"])
    assert done.returncode == 0
    assert '"allowed": 1' in done.stdout
    assert done.stderr.strip() == "click not loaded"


def test_help_is_click_s() -> None:
    done = run_entry(["slots", "allowed", "--help"])
    assert done.returncode == 0
    assert done.stdout.startswith("Usage: vibey-gh slots allowed [OPTIONS]")
    assert done.stderr.strip() == "click loaded"


@pytest.mark.parametrize("argv", [["slots", "allowed", "--json"], ["--debug", "slots", "allowed"]])
def test_a_reader_that_went_away_ends_quietly_with_exit_0(argv: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: the first write meets a broken pipe
    try:
        done = subprocess.run(
            [sys.executable, "-m", "vibey_gh", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, ""), "as `head` itself: it had all it wanted"
