"""`slots calibrate` at the CLI edge: bad input is one line and exit 2, nothing overwritten."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.ports import free_port
from vibey_gh.cli.main import cli


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def write_config(folder: Path, **keys: object) -> None:
    lines = ["[local_models]"] + [f"{k} = {json.dumps(v)}" for k, v in keys.items()]
    (folder / "vibey-gh.toml").write_text("\n".join(lines) + "\n")


def test_if_requested_without_a_request_needs_no_corpus_and_does_nothing(
    isolated_state: Path,
) -> None:
    code, out, _ = invoke("slots", "calibrate", "--if-requested", "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["skipped"] is True and len(answer["fingerprint"]) == 16
    assert (
        not list((isolated_state / "runs").glob("*"))
        if (isolated_state / "runs").exists()
        else True
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--slots", "1,x"], "--slots takes a comma-separated list"),
        (["--slots", "0,1"], "--slots counts must be between 1 and 16 (the largest N to try"),
        (["--slots", "99999999999999999999"], "must be between 1 and 16 (the largest N to try"),
        (["--slots", "1,2,8", "--max-slots", "4"], "must be between 1 and 4 ("),
        (["--slots", "1,,2"], "--slots has an empty item in '1,,2'"),
        (["--slots", "1,2,"], "--slots has an empty item"),
        (["--slots", "1,-2"], "--slots takes a comma-separated list of whole numbers"),
        ([], "--corpus FILE is required"),
        (["--corpus", "missing.json"], "corpus file not found"),
        (["--demo", "--corpus", "c.json"], "--demo builds its own corpus"),
        (["--wait-idle", "-5", "--corpus", "c.json"], "--wait-idle takes 0 or more seconds"),
        (["--wait-idle", "nan", "--corpus", "c.json"], "--wait-idle takes 0 or more seconds"),
        (
            ["--demo", "--min-step-seconds", "30", "--max-step-seconds", "10"],
            "--max-step-seconds 10 is below the minimum 30",
        ),
        (["--demo", "--min-step-seconds", "0"], "--min-step-seconds"),
        (["--demo", "--think-time", "-1"], "--think-time must be recorded, none or a number"),
        (["--demo", "--think-time", "later"], "--think-time must be recorded, none or a number"),
        (["--demo", "--think-cap", "0"], "--think-cap must be a number of seconds above 0"),
        (["--demo", "--think-cap", "long"], "--think-cap must be a number of seconds above 0"),
        (["--demo", "--think-cap", "1e308"], "above 0 and at most 86400 (a day), not 1e+308"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    code, _, err = invoke("slots", "calibrate", *args)
    assert code == 2
    assert message in err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_a_corpus_edited_by_hand_is_refused_and_left_alone(tmp_path: Path) -> None:
    _, path = tiny_corpus(tmp_path)
    data = json.loads(path.read_text())
    data["segments"][0]["turns"][0]["messages"][0]["content"] = "edited"
    edited = json.dumps(data)
    path.write_text(edited)
    code, _, err = invoke("slots", "calibrate", "--corpus", str(path), "--window", str(TINY_WINDOW))
    assert code == 2
    assert "hash" in err
    assert path.read_text() == edited


@pytest.mark.parametrize(
    ("think", "message"),
    [
        (["--think-time", "recorded"], "this corpus holds no think times"),
        (["--think-time", "400"], "could never complete inside a step"),
    ],
)
def test_think_time_the_corpus_cannot_take_is_refused_before_the_first_step(
    tmp_path: Path, isolated_state: Path, think: list[str], message: str
) -> None:
    _, path = tiny_corpus(tmp_path)
    before = path.read_bytes()
    code, _, err = invoke(
        "slots", "calibrate", "--corpus", str(path), "--window", str(TINY_WINDOW), *think
    )
    assert code == 2
    assert message in err and err.count("\n") == 1
    assert path.read_bytes() == before
    assert not (isolated_state / "runs").exists() or not list((isolated_state / "runs").iterdir())


@pytest.mark.parametrize("asked", ["512", "2048"])
def test_a_window_other_than_the_corpus_s_is_refused_naming_both_and_nothing_written(
    tmp_path: Path, isolated_state: Path, asked: str
) -> None:
    _, path = tiny_corpus(tmp_path)
    code, _, err = invoke("slots", "calibrate", "--corpus", str(path), "--window", asked)
    assert code == 2 and err.count("\n") == 1
    assert f"--window {int(asked):,}" in err and f"corpus's window {TINY_WINDOW:,}" in err
    assert "--split-window" in err
    assert not (isolated_state / "runs").exists() or not list((isolated_state / "runs").iterdir())
    assert not list((isolated_state / "evidence").glob("*.json"))


def test_a_config_window_other_than_the_corpus_s_is_refused_naming_both(
    tmp_path: Path, isolated_state: Path
) -> None:
    _, path = tiny_corpus(tmp_path)
    write_config(Path.cwd(), runner="simulated", window=4096)
    code, _, err = invoke("slots", "calibrate", "--corpus", str(path))
    assert code == 2 and err.count("\n") == 1
    assert "window 4,096" in err and f"corpus's window is {TINY_WINDOW:,}" in err
    assert not list((isolated_state / "evidence").glob("*.json"))


def test_the_corpus_s_window_is_measured_when_nothing_else_is_said(tmp_path: Path) -> None:
    from vibey_gh.config import LocalModels
    from vibey_gh.slots.measurement.calibration_method import measured_window

    corpus, _ = tiny_corpus(tmp_path)
    assert measured_window(corpus, None, LocalModels(window=4096)) == TINY_WINDOW
    assert measured_window(corpus, TINY_WINDOW, LocalModels(window=4096)) == TINY_WINDOW
    assert measured_window(corpus, None, LocalModels(), split=True) == TINY_WINDOW // 2


def test_a_taken_calibration_port_is_refused_before_anything_is_recorded(
    tmp_path: Path, isolated_state: Path
) -> None:
    _, path = tiny_corpus(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        write_config(
            Path.cwd(), calibration_port=port, production_url=f"http://127.0.0.1:{free_port()}"
        )
        code, _, err = invoke(
            "slots", "calibrate", "--corpus", str(path), "--window", str(TINY_WINDOW)
        )
    assert code == 2
    assert f"port {port}" in err and "in use" in err
    assert not list((isolated_state / "evidence").glob("*.json"))


@pytest.mark.parametrize(
    ("make_out", "message"),
    [
        (lambda root: root / "a-file", "is a regular file; name a folder"),
        (lambda root: root / "a-file" / "below", "a-file is not a folder); give a writable folder"),
    ],
)
def test_an_out_path_that_cannot_take_evidence_is_refused_before_the_first_step(
    tmp_path: Path, isolated_state: Path, make_out, message: str
) -> None:  # type: ignore[no-untyped-def]
    _, path = tiny_corpus(tmp_path)
    (tmp_path / "a-file").write_text("keep me")
    write_config(Path.cwd(), production_url=f"http://127.0.0.1:{free_port()}")
    out = make_out(tmp_path)
    code, _, err = invoke(
        "slots", "calibrate", "--corpus", str(path), "--window", str(TINY_WINDOW), "--out", str(out)
    )
    assert code == 2
    assert message in err and err.count("\n") == 1
    assert (tmp_path / "a-file").read_text() == "keep me"
    assert not (isolated_state / "runs").exists() or not list((isolated_state / "runs").iterdir())


def test_a_missing_runner_binary_is_refused_before_the_first_step(
    tmp_path: Path, isolated_state: Path
) -> None:
    _, path = tiny_corpus(tmp_path)
    write_config(
        Path.cwd(),
        runner="llama-server",
        runner_binary=str(tmp_path / "no-such-llama-server"),
        production_url=f"http://127.0.0.1:{free_port()}",
    )
    code, _, err = invoke("slots", "calibrate", "--corpus", str(path), "--window", str(TINY_WINDOW))
    assert code == 2, err
    assert "llama-server binary not found or not executable" in err and err.count("\n") == 1
    assert not (isolated_state / "runs").exists() or not list((isolated_state / "runs").iterdir())
