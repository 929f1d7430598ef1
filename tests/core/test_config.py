"""`[local_models]`: defaults, lookup order, and one clear line for every mistake."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from msgspec.structs import replace

from vibey_gh.cli.main import cli
from vibey_gh.config import LocalModels, choose_config_file, find_config, load_config, parse_config
from vibey_gh.errors import ConfigError
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.think import ThinkAsked, ThinkMode


def test_no_file_means_the_defaults(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path, environ={})
    assert config == LocalModels()
    assert config.concurrent_runs == 1
    assert config.calibration_port == 11435
    assert config.bounds == Bounds(0.80, 2.0, 64.0, 0.05, 0.10, 2)
    assert config.production == "http://127.0.0.1:8080"


def test_lookup_order_env_then_cwd_then_user_dir(tmp_path: Path) -> None:
    cwd, other, user = tmp_path / "cwd", tmp_path / "other.toml", tmp_path / "xdg"
    cwd.mkdir()
    other.write_text('[local_models]\nconcurrent_runs = "measured"\n')
    (user / "vibey-gh").mkdir(parents=True)
    (user / "vibey-gh" / "vibey-gh.toml").write_text("[local_models]\nconcurrent_runs = 3\n")
    xdg = {"XDG_CONFIG_HOME": str(user)}
    assert load_config(cwd, xdg).concurrent_runs == 3
    (cwd / "vibey-gh.toml").write_text("[local_models]\nconcurrent_runs = 2\n")
    assert load_config(cwd, xdg).concurrent_runs == 2
    env = {**xdg, "VIBEY_GH_CONFIG": str(other)}
    assert find_config(cwd, env) == other  # named on purpose: wins over ./vibey-gh.toml
    assert load_config(cwd, env).concurrent_runs == "measured"
    with pytest.raises(ConfigError, match="no such file"):
        find_config(tmp_path, {"VIBEY_GH_CONFIG": str(tmp_path / "gone.toml")})


def test_choosing_a_config_file_names_it_absolutely(tmp_path: Path) -> None:
    env: dict[str, str] = {}
    choose_config_file("lab.toml", env)
    assert env["VIBEY_GH_CONFIG"] == str(Path.cwd() / "lab.toml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[local_models]\nconcurent_runs = 2\n",
            'concurent_runs is not a known key (did you mean "concurrent_runs"?)',
        ),
        (
            "[local_models.bounds]\nmin_gian = 0.2\n",
            'min_gian is not a known key (did you mean "min_gain"?)',
        ),
        (
            "[local_model]\nwindow = 4096\n",
            "unknown table or key 'local_model' (did you mean \"local_models\"?)",
        ),
        ("[local_models]\nzzz = 1\n", "zzz is not a known key"),
    ],
)
def test_a_misspelled_key_gets_a_suggestion(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "vibey-gh.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, {})
    assert expected in str(raised.value)
    assert "did you mean" not in str(raised.value) or "zzz" not in text


def test_every_key_is_read() -> None:
    raw = {
        "local_models": {
            "concurrent_runs": "measured",
            "runner": "ollama",
            "model": "qwen3:8b",
            "window": 65536,
            "production_url": "http://127.0.0.1:11434/",
            "calibration_port": 11500,
            "runner_binary": "/opt/ollama",
            "max_tokens": 512,
            "stale_after_days": 14,
            "bounds": {"wired_ceiling": 0.7, "patience": 3, "min_gain": 0.2},
        }
    }
    config = parse_config(raw, Path("x.toml"))
    assert config.production == "http://127.0.0.1:11434"
    assert (config.runner, config.model, config.window, config.max_tokens) == (
        "ollama",
        "qwen3:8b",
        65536,
        512,
    )
    assert config.bounds.wired_ceiling == 0.7 and config.bounds.patience == 3
    assert config.stale_after_days == 14.0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[local_models]\nconcurent_runs = 2\n", "local_models.concurent_runs is not a known key"),
        ("[local_models]\nconcurrent_runs = 0\n", "local_models.concurrent_runs must be 1"),
        ('[local_models]\nconcurrent_runs = "lots"\n', "local_models.concurrent_runs must be 1"),
        ("[local_models]\nconcurrent_runs = true\n", "local_models.concurrent_runs must be 1"),
        ('[local_models]\nrunner = "vllm"\n', "local_models.runner must be one of embedded"),
        ('[local_models]\nwindow = "big"\n', "local_models.window must be an integer"),
        ("[local_models]\ncalibration_port = 70000\n", "must be between 1 and 65535"),
        (
            '[local_models]\nproduction_url = "localhost:11434"\n',
            "must be an http:// or https:// URL",
        ),
        (
            "[local_models.bounds]\nwired_ceiling = 1.5\n",
            "local_models.bounds.wired_ceiling must be between",
        ),
        ("[local_models.bounds]\nswap = 2\n", "local_models.bounds.swap is not a known key"),
        ("[other]\nx = 1\n", "unknown table or key 'other'"),
        ("[local_models\n", "not valid TOML"),
        ('[local_models]\nproduction_url = "http://[::1"\n', "Invalid IPv6 URL"),
        ('[local_models]\nproduction_url = "http://h:99999"\n', "Port out of range"),
        ('[local_models]\nproduction_url = "http://h:port"\n', "Port could not be cast"),
        ('[local_models]\nproduction_url = "http://:80"\n', "names no host"),
        ('[local_models]\nproduction_url = "http://h :80"\n', "holds spaces"),
        ('[local_models]\nproduction_url = "ftp://h"\n', "is not http:// or https://"),
        ("[local_models]\nwindow = nan\n", "local_models.window must be an integer"),
        ("[local_models]\nstale_after_days = inf\n", "stale_after_days must be between"),
        ("[local_models.bounds]\nmin_gain = nan\n", "min_gain must be between"),
        ("x = " + "[" * 600 + "]" * 600 + "\n", "is nested more than 64 levels deep"),
        ("local_models = 3\n", "[local_models] must be a table"),
        ("[local_models]\nmin_step_seconds = 0\n", "local_models.min_step_seconds must be"),
        ("[local_models]\ninterleave_seconds = 0\n", "local_models.interleave_seconds must be"),
        ('[local_models]\ninterleave_seconds = "15"\n', "local_models.interleave_seconds must"),
        (
            "[local_models]\nmin_step_seconds = 30\nmax_step_seconds = 10\n",
            "local_models.max_step_seconds must be at least min_step_seconds (30)",
        ),
        (
            "[local_models.simulated]\nknees = 4\n",
            "local_models.simulated.knees is not a known key",
        ),
        (
            "[local_models.simulated]\nnoise = -0.1\n",
            "local_models.simulated.noise must be between",
        ),
        ("[local_models.bounds]\nconfidence = 1.5\n", "local_models.bounds.confidence must be"),
        ('[local_models]\nthink_time = "soon"\n', 'local_models.think_time must be "recorded"'),
        ("[local_models]\nthink_time = -2\n", 'local_models.think_time must be "recorded"'),
        ("[local_models]\nthink_cap = 0\n", "local_models.think_cap must be a number"),
        ('[local_models]\nthink_cap = "1m"\n', "local_models.think_cap must be a number"),
        # the docs say a number: text that reads as one is still not a number in the file
        (
            '[local_models]\nthink_time = "5"\n',
            'local_models.think_time must be "recorded", "none" or a number of seconds from 0 to '
            "86400 (a number, not the string '5')",
        ),
        (
            "[local_models]\nthink_cap = 1e308\n",
            "local_models.think_cap must be a number of seconds above 0 and at most 86400, not "
            "1e+308",
        ),
    ],
)
def test_mistakes_name_the_key_and_the_file_and_other_commands_exit_2(
    tmp_path: Path, body: str, message: str
) -> None:
    (Path.cwd() / "vibey-gh.toml").write_text(body)
    with pytest.raises(ConfigError) as error:
        load_config()
    assert message in str(error.value)
    assert "vibey-gh.toml" in str(error.value)
    result = CliRunner().invoke(cli, ["slots", "show"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1
    gate = CliRunner().invoke(cli, ["slots", "allowed"])  # the gate fails safe instead
    assert gate.exit_code == 0 and gate.stderr == ""
    assert gate.stdout.startswith("1 — config error: ") and message in gate.stdout
    assert (Path.cwd() / "vibey-gh.toml").read_text() == body


def test_production_settings_are_read() -> None:
    raw = {
        "local_models": {
            "runner_args": ["-ngl", "99", "-fa", "on", "--cache-type-k=q8_0"],
            "runner_env": {"OLLAMA_FLASH_ATTENTION": "1", "OLLAMA_KV_CACHE_TYPE": "q8_0"},
        }
    }
    config = parse_config(raw, Path("x.toml"))
    assert config.runner_args == ("-ngl", "99", "-fa", "on", "--cache-type-k=q8_0")
    assert config.runner_env == {"OLLAMA_FLASH_ATTENTION": "1", "OLLAMA_KV_CACHE_TYPE": "q8_0"}
    assert LocalModels().runner_args == () and LocalModels().runner_env is None


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('runner_args = ["-m", "other.gguf"]', "runner_args may not set '-m'"),
        ('runner_args = ["--ctx-size=8192"]', "runner_args may not set '--ctx-size'"),
        ('runner_args = ["-fa", "on", "--port", "9"]', "runner_args may not set '--port'"),
        ('runner_args = ["--parallel", "4"]', "runner_args may not set '--parallel'"),
        ('runner_args = ["-np", "4"]', "runner_args may not set '-np'"),
        ('runner_args = ["--host", "0.0.0.0"]', "runner_args may not set '--host'"),
        ('runner_args = ["-c", "4096"]', "runner_args may not set '-c'"),
        ('runner_args = ["--model", "x"]', "runner_args may not set '--model'"),
        ('runner_args = "-fa on"', "runner_args must be a list of strings"),
        ("runner_args = [99]", "runner_args must hold non-empty strings"),
        ("runner_env = { OLLAMA_FLASH_ATTENTION = 1 }", "OLLAMA_FLASH_ATTENTION must be a string"),
        ('runner_env = { CUDA_VISIBLE_DEVICES = "0" }', "is not an OLLAMA_* variable"),
        ('runner_env = { OLLAMA_ = "0" }', "runner_env.OLLAMA_ is not an OLLAMA_* variable"),
        ('runner_env = "OLLAMA_X=1"', "runner_env must be a table"),
    ],
)
def test_bad_production_settings_are_one_line_exit_2_and_leave_the_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, message: str
) -> None:
    config = tmp_path / "vibey-gh.toml"
    text = f'[local_models]\nrunner = "llama-server"\n{toml}\n'
    config.write_text(text)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert config.read_text() == text


def test_step_lengths_and_the_simulated_runner_are_read() -> None:
    raw = {
        "local_models": {
            "runner": "simulated",
            "min_step_seconds": 20,
            "simulated": {"knee": 3, "noise": 0.2, "seed": 7, "tokens_per_second": 50},
            "bounds": {"confidence": 0.95},
        }
    }
    config = parse_config(raw, None)
    assert config.min_step_seconds == 20.0 and config.max_step_seconds is None
    assert config.step_cap_seconds == 100.0, "five times the minimum by default"
    bound = replace(config, bounds=Bounds(latency_factor=1.5))
    assert bound.step_cap_seconds == 800.0, "eight times that with a latency bound set"
    assert bound.even_looks_seconds == 100.0 and config.even_looks_seconds is None
    explicit = replace(bound, max_step_seconds=150.0)
    assert explicit.step_cap_seconds == 150.0, "max_step_seconds set: as set"
    assert (config.simulated.knee, config.simulated.noise, config.simulated.seed) == (3, 0.2, 7)
    assert config.bounds.confidence == 0.95
    capped = parse_config({"local_models": {"max_step_seconds": 90}}, None)
    assert capped.min_step_seconds == 60.0 and capped.step_cap_seconds == 90.0
    assert capped.interleave_seconds is None, "off unless set"
    blocks = parse_config({"local_models": {"interleave_seconds": 20}}, None)
    assert blocks.interleave_seconds == 20.0


def test_think_time_and_its_cap_are_read() -> None:
    assert parse_config({}, None).think == ThinkAsked(None, 0.0, 60.0)
    for value, mode, fixed in (
        ("recorded", ThinkMode.RECORDED, 0.0),
        ("none", ThinkMode.NONE, 0.0),
        (12, ThinkMode.FIXED, 12.0),
        (0.5, ThinkMode.FIXED, 0.5),
    ):
        raw = {"local_models": {"think_time": value, "think_cap": 120}}
        assert parse_config(raw, None).think == ThinkAsked(mode, fixed, 120.0)
