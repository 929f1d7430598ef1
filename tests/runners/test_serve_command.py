"""`vibey-gh runner serve` as a user runs it: a process in the foreground, stopped by a signal."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest
from click.testing import CliRunner

from tests.support.ports import free_port
from vibey_gh.cli.main import cli


def serve_argv(*extra: str) -> list[str]:
    return [sys.executable, "-m", "vibey_gh", "runner", "serve", *extra]


def test_help_has_examples() -> None:
    result = CliRunner().invoke(cli, ["runner", "serve", "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output
    assert "vibey-gh runner serve --runner embedded --slots 2 --window 4096" in result.output


def test_unknown_runner_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(cli, ["runner", "serve", "--runner", "vllm"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: unknown runner 'vllm'; valid runners: embedded, llama-server, ollama, simulated"
    ]


def test_zero_slots_is_exit_2() -> None:
    assert CliRunner().invoke(cli, ["runner", "serve", "--slots", "0"]).exit_code == 2


def test_missing_model_is_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["runner", "serve", "--model", str(tmp_path / "absent.gguf"), "--port", "1"]
    )
    assert result.exit_code == 2
    assert "model file not found" in result.output


def test_port_in_use_is_exit_2(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = CliRunner().invoke(
            cli, ["runner", "serve", "--port", str(port), "--log", str(tmp_path / "r.log")]
        )
    assert result.exit_code == 2
    assert f"port {port} on 127.0.0.1 is already in use" in result.output


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_serves_until_sigterm_then_stops_its_runner(tmp_path: Path) -> None:
    log = tmp_path / "serve" / "runner.log"
    process = subprocess.Popen(
        serve_argv(
            "--runner", "embedded", "--slots", "1", "--window", "256", "--threads", "2",
            "--port", str(free_port()), "--log", str(log), "--json",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("}"):
            break
    facts = json.loads("".join(lines))
    assert facts["runner"] == "embedded" and facts["slots"] == 1 and facts["window"] == 256
    assert facts["log"] == str(log)
    assert httpx.get(facts["url"] + "/health", timeout=5).status_code == 200
    runner_pid = facts["pid"]
    assert psutil.pid_exists(runner_pid)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert "stopping the runner" in stderr
    assert not psutil.pid_exists(runner_pid) or (
        psutil.Process(runner_pid).status() == psutil.STATUS_ZOMBIE
    )
