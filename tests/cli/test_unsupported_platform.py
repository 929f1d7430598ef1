"""On an OS other than macOS and Linux: one line naming the supported platforms, never a crash.

The platform name is handed in as a collaborator (the `run_cli` fixture), as the probes take theirs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fixtures import RunCli
from vibey_gh.composition import real_collaborators
from vibey_gh.config import LocalModels

REASON = "unsupported platform: win32; vibey-gh runs on macOS and Linux"

COMMANDS_THAT_NEED_THE_SEAMS = [
    ["slots", "calibrate", "--demo"],
    ["slots", "apply", "--slots", "2"],
    ["lane", "run", "spec.toml"],
    ["storm", "run", "queue"],
    ["runner", "serve", "--runner", "embedded"],
]


@pytest.mark.parametrize("args", COMMANDS_THAT_NEED_THE_SEAMS, ids=lambda a: " ".join(a[:2]))
def test_a_command_that_needs_the_seams_refuses_in_one_line(
    args: list[str], isolated_state: Path, run_cli: RunCli
) -> None:
    result = run_cli(args, platform="win32")
    assert result.exit_code == 1, result.output
    assert result.output == f"error: {REASON}\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not any(isolated_state.iterdir())  # refused before touching the state dir


@pytest.mark.parametrize("declaration", [1, 4, "measured"])
def test_allowed_answers_one_with_the_reason(declaration: int | str, tmp_path: Path) -> None:
    config = LocalModels(concurrent_runs=declaration)  # type: ignore[arg-type]
    answer = real_collaborators(platform="cygwin").decide_allowed(config)
    assert answer.allowed == 1
    assert answer.reason == "unsupported platform: cygwin; vibey-gh runs on macOS and Linux"
    assert (answer.fingerprint, answer.requested, answer.request) == (None, False, None)


def test_allowed_on_the_command_line_exits_0_with_the_reason(
    isolated_state: Path, run_cli: RunCli
) -> None:
    plain = run_cli(["slots", "allowed"], platform="win32")
    assert (plain.exit_code, plain.output) == (0, f"1 — {REASON}\n")
    as_json = run_cli(["slots", "allowed", "--json"], platform="win32")
    assert as_json.exit_code == 0
    data = json.loads(as_json.output)
    assert (data["allowed"], data["reason"], data["fingerprint"]) == (1, REASON, None)
    assert data["reason_code"] == "unsupported_platform"
    assert not any(isolated_state.iterdir())


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_macos_and_linux_are_not_refused(platform: str, run_cli: RunCli) -> None:
    config = LocalModels(concurrent_runs=1)
    answer = real_collaborators(platform=platform).decide_allowed(config)
    assert (answer.allowed, answer.reason) == (1, "declared 1 (concurrent_runs = 1)")
    result = run_cli(["storm", "run", "no-such-queue"], platform=platform)
    assert "unsupported platform" not in result.output
    assert result.exit_code == 2 and "no such queue folder" in result.output
