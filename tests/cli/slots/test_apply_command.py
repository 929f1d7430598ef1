"""`vibey-gh slots apply` end to end, on a temporary root with recorded commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vibey_gh.cli.main import cli
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.process.commands import CannedCommandRunner

SYSTEMD_COMMANDS = [("systemctl", "daemon-reload"), ("systemctl", "restart", "ollama")]
MAC_COMMANDS = [
    ("launchctl", "setenv", "OLLAMA_NUM_PARALLEL", "2"),
    ("launchctl", "setenv", "OLLAMA_CONTEXT_LENGTH", "8192"),
    ("osascript", "-e", 'quit app "Ollama"'),
    ("open", "-a", "Ollama"),
]


def use_config(text: str) -> None:
    # the test's working directory is a fresh folder (tests/conftest.py)
    Path("vibey-gh.toml").write_text(text, encoding="utf-8")


OLLAMA_CONFIG = '[local_models]\nrunner = "ollama"\nwindow = 8192\n'


ApplyCli = Callable[..., Result]


@pytest.fixture
def apply_cli(run_cli: ApplyCli) -> ApplyCli:
    """`slots apply ARGS` on the given probes (a temporary root, recorded commands) and with
    the given `decide_allowed`; the rest real."""

    def run(args: list[str], probes: PlatformProbes | None = None, **parts: Any) -> Result:
        if probes is not None:
            parts["probes"] = lambda: probes
        return run_cli(["slots", "apply", *args], **parts)

    return run


def allows(number: int) -> Any:
    return lambda config: StubAnswer(number)


def systemd_root(root: Path) -> Path:
    """A root whose init system is systemd (sd_booted: /run/systemd/system exists)."""
    (root / "run/systemd/system").mkdir(parents=True, exist_ok=True)
    return root


def drop_in(root: Path) -> Path:
    return root / "etc/systemd/system/ollama.service.d/vibey-gh-slots.conf"


def test_dry_run_prints_exactly_and_changes_nothing(tmp_path: Path, apply_cli: ApplyCli) -> None:
    use_config(OLLAMA_CONFIG)
    run = CannedCommandRunner()
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), run)
    result = apply_cli(["--slots", "2"], probes=probes, decide_allowed=allows(3))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == (
        "ollama on linux: 2 slot(s) of 8192 tokens "
        "(--slots 2, inside what slots allowed answers (3))"
    )
    assert '       Environment="OLLAMA_NUM_PARALLEL=2"' in lines
    assert '       Environment="OLLAMA_CONTEXT_LENGTH=8192"' in lines
    assert "     $ systemctl restart ollama" in lines
    assert lines[-1] == "dry run: nothing was done; run again with --yes to do it."
    assert run.calls == []
    assert not drop_in(tmp_path).exists()


def test_yes_writes_the_drop_in_and_restarts(tmp_path: Path, apply_cli: ApplyCli) -> None:
    use_config(OLLAMA_CONFIG)
    run = CannedCommandRunner({argv: (0, "") for argv in SYSTEMD_COMMANDS})
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), run)
    result = apply_cli(
        ["--slots", "2", "--window", "16384", "--yes"],
        probes=probes,
        decide_allowed=allows(3),
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "done: 3 step(s)."
    text = drop_in(tmp_path).read_text()
    assert 'Environment="OLLAMA_NUM_PARALLEL=2"' in text
    assert 'Environment="OLLAMA_CONTEXT_LENGTH=16384"' in text
    assert run.calls == SYSTEMD_COMMANDS


def test_yes_on_macos_runs_launchctl_and_restarts_the_app(
    tmp_path: Path, apply_cli: ApplyCli
) -> None:
    use_config(OLLAMA_CONFIG)
    run = CannedCommandRunner({argv: (0, "") for argv in MAC_COMMANDS})
    probes = PlatformProbes.detect("darwin", tmp_path, run)
    result = apply_cli(["--slots", "2", "--yes"], probes=probes, decide_allowed=allows(3))
    assert result.exit_code == 0, result.output
    assert run.calls == MAC_COMMANDS


def test_a_failing_restart_exits_1_naming_the_step(tmp_path: Path, apply_cli: ApplyCli) -> None:
    use_config(OLLAMA_CONFIG)
    run = CannedCommandRunner({SYSTEMD_COMMANDS[0]: (0, ""), SYSTEMD_COMMANDS[1]: (5, "")})
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), run)
    result = apply_cli(["--slots", "2", "--yes"], probes=probes, decide_allowed=allows(3))
    assert result.exit_code == 1
    assert "error: `systemctl restart ollama` exited 5" in result.output
    assert "Traceback" not in result.output


def test_json_dry_run(tmp_path: Path, apply_cli: ApplyCli) -> None:
    use_config(OLLAMA_CONFIG)
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), CannedCommandRunner())
    result = apply_cli(["--slots", "3", "--json"], probes=probes, decide_allowed=allows(3))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["slots"], data["window"], data["dry_run"], data["automatic"]) == (
        3,
        8192,
        True,
        True,
    )
    assert data["actions"][0]["path"] == str(drop_in(tmp_path))
    assert data["actions"][2]["argv"] == ["systemctl", "restart", "ollama"]


@dataclass
class StubAnswer:
    allowed: int

    def line(self) -> str:
        return f"{self.allowed} — measured: stub"

    def to_json(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "reason": "measured: stub"}


def test_without_slots_the_allowed_answer_is_applied(tmp_path: Path, apply_cli: ApplyCli) -> None:
    use_config(OLLAMA_CONFIG)
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), CannedCommandRunner())
    result = apply_cli(["--json"], probes=probes, decide_allowed=lambda config: StubAnswer(4))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["slots"] == 4
    assert data["allowed"] == {"allowed": 4, "reason": "measured: stub"}
    assert "OLLAMA_NUM_PARALLEL=4" in data["actions"][0]["content"]


def test_default_declaration_applies_one_with_the_real_allowed(
    tmp_path: Path, apply_cli: ApplyCli
) -> None:
    # no config: declaration 1 and the embedded runner; `slots allowed` answers without probing
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), CannedCommandRunner())
    result = apply_cli(["--yes"], probes=probes)
    assert result.exit_code == 0, result.output
    assert "1 slot(s) of 4096 tokens (slots allowed: 1 — declared 1" in result.output
    assert "vibey-gh runner serve --runner embedded --slots 1 --window 4096" in result.output
    assert result.output.splitlines()[-1].startswith("nothing here is done automatically")


@pytest.mark.parametrize("args", [["--slots", "0"], ["--slots", "x"], ["--window", "100"]])
def test_bad_options_exit_2(args: list[str], apply_cli: ApplyCli) -> None:
    assert apply_cli(args).exit_code == 2


def test_bad_config_exits_2_and_writes_nothing(tmp_path: Path, apply_cli: ApplyCli) -> None:
    use_config('[local_models]\nrunner = "vllm"\n')
    run = CannedCommandRunner()
    result = apply_cli(
        ["--slots", "2", "--yes"],
        probes=PlatformProbes.detect("linux", systemd_root(tmp_path), run),
    )
    assert result.exit_code == 2
    assert "local_models.runner" in result.output
    assert run.calls == [] and not (tmp_path / "etc").exists()


def test_help_has_examples() -> None:
    result = CliRunner().invoke(cli, ["slots", "apply", "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output
    assert "vibey-gh slots apply --slots 2 --window 32768" in result.output


def test_slots_above_the_answer_are_refused_saying_what_the_evidence_supports(
    tmp_path: Path, apply_cli: ApplyCli
) -> None:
    use_config(OLLAMA_CONFIG)  # declaration 1 (the default)
    run = CannedCommandRunner()
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), run)
    asked: list[Any] = []

    def decide(config: Any) -> StubAnswer:
        asked.append(config.concurrent_runs)
        return StubAnswer(1 if config.concurrent_runs == 1 else 2)

    result = apply_cli(["--slots", "4", "--yes"], probes=probes, decide_allowed=decide)
    assert result.exit_code == 1
    assert result.stderr == (
        "error: --slots 4 is more than `slots allowed` answers: 1 — measured: stub; the evidence "
        "alone supports 2 (2 — measured: stub); --force applies 4 anyway\n"
    )
    assert asked == [1, "measured"]
    assert run.calls == [] and not drop_in(tmp_path).exists()


def test_force_applies_slots_above_the_answer(tmp_path: Path, apply_cli: ApplyCli) -> None:
    use_config(OLLAMA_CONFIG)
    run = CannedCommandRunner({argv: (0, "") for argv in SYSTEMD_COMMANDS})
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), run)
    result = apply_cli(["--slots", "4", "--yes", "--force"], probes=probes)
    assert result.exit_code == 0, result.output
    assert "4 slot(s) of 8192 tokens (--slots 4, forced)" in result.output
    assert "OLLAMA_NUM_PARALLEL=4" in drop_in(tmp_path).read_text()


def test_with_the_real_allowed_and_no_evidence_slots_above_one_are_refused(
    tmp_path: Path, apply_cli: ApplyCli
) -> None:
    # production (Ollama) does not answer here: the real `allowed` answers 1
    use_config(OLLAMA_CONFIG + 'production_url = "http://127.0.0.1:9"\n')
    probes = PlatformProbes.detect("linux", systemd_root(tmp_path), CannedCommandRunner())
    result = apply_cli(["--slots", "2"], probes=probes)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --slots 2 is more than `slots allowed` answers: 1")
    assert result.stderr.count("\n") == 1
