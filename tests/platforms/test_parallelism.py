"""Setting the production runner's slots and window, against a temporary root and recorded
commands; never the real system."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from vibey_gh.errors import Refused, RunnerError
from vibey_gh.platforms.parallelism import (
    MacOSAppParallelism,
    ManualParallelism,
    SystemdParallelism,
    can_write,
    is_note,
)
from vibey_gh.platforms.process.commands import CannedCommandRunner, SubprocessCommandRunner

# the systemd unit of the Ollama service (the Ollama kind names it)
UNIT = "ollama"

MAC_COMMANDS = [
    ("launchctl", "setenv", "OLLAMA_NUM_PARALLEL", "2"),
    ("launchctl", "setenv", "OLLAMA_CONTEXT_LENGTH", "65536"),
    ("osascript", "-e", 'quit app "Ollama"'),
    ("open", "-a", "Ollama"),
]
SYSTEMD_COMMANDS = [("systemctl", "daemon-reload"), ("systemctl", "restart", "ollama")]


def succeeding(commands: list[tuple[str, ...]]) -> CannedCommandRunner:
    return CannedCommandRunner({argv: (0, "") for argv in commands})


def test_macos_plan_is_setenv_then_quit_and_reopen() -> None:
    actions = MacOSAppParallelism(CannedCommandRunner()).plan(2, 65536)
    assert [a.argv for a in actions] == MAC_COMMANDS
    assert all(a.path is None for a in actions)
    assert "staged update" in actions[3].description


def test_macos_apply_runs_the_commands_in_order() -> None:
    run = succeeding(MAC_COMMANDS)
    parallelism = MacOSAppParallelism(run)
    parallelism.apply(parallelism.plan(2, 65536))
    assert run.calls == MAC_COMMANDS


def test_macos_apply_stops_at_the_first_failure_and_says_what_ran() -> None:
    run = succeeding(MAC_COMMANDS[:2])  # osascript is missing
    parallelism = MacOSAppParallelism(run)
    with pytest.raises(RunnerError) as caught:
        parallelism.apply(parallelism.plan(2, 65536))
    assert run.calls == MAC_COMMANDS[:3]
    message = str(caught.value)
    assert message.startswith("osascript not found")
    assert "set OLLAMA_NUM_PARALLEL=2" in message
    assert "not done: open the Ollama app again" in message


def test_systemd_plan_renders_the_drop_in(tmp_path: Path) -> None:
    actions = SystemdParallelism(CannedCommandRunner(), tmp_path, unit=UNIT).plan(3, 32768)
    drop_in = tmp_path / "etc/systemd/system/ollama.service.d/vibey-gh-slots.conf"
    assert actions[0].path == drop_in
    assert actions[0].content is not None
    lines = actions[0].content.splitlines()
    assert "[Service]" in lines
    assert 'Environment="OLLAMA_NUM_PARALLEL=3"' in lines
    assert 'Environment="OLLAMA_CONTEXT_LENGTH=32768"' in lines
    assert [a.argv for a in actions[1:]] == SYSTEMD_COMMANDS
    assert not drop_in.exists(), "planning writes nothing"


def test_systemd_apply_writes_privately_then_reloads_and_restarts(tmp_path: Path) -> None:
    run = succeeding(SYSTEMD_COMMANDS)
    parallelism = SystemdParallelism(run, tmp_path, unit=UNIT)
    actions = parallelism.plan(2, 16384)
    parallelism.apply(actions)
    drop_in = parallelism.drop_in
    assert drop_in.read_text() == actions[0].content
    assert stat.S_IMODE(drop_in.stat().st_mode) == 0o600
    assert stat.S_IMODE(drop_in.parent.stat().st_mode) == 0o700
    assert run.calls == SYSTEMD_COMMANDS
    assert [p.name for p in drop_in.parent.iterdir()] == ["vibey-gh-slots.conf"]


def test_systemd_apply_replaces_its_own_drop_in_and_leaves_others(tmp_path: Path) -> None:
    parallelism = SystemdParallelism(succeeding(SYSTEMD_COMMANDS), tmp_path, unit=UNIT)
    parallelism.drop_in.parent.mkdir(parents=True)
    operator_file = parallelism.drop_in.parent / "override.conf"
    operator_file.write_text("[Service]\nEnvironment=OLLAMA_HOST=0.0.0.0\n")
    parallelism.apply(parallelism.plan(1, 4096))
    parallelism.apply(parallelism.plan(4, 8192))
    assert 'Environment="OLLAMA_NUM_PARALLEL=4"' in parallelism.drop_in.read_text()
    assert operator_file.read_text() == "[Service]\nEnvironment=OLLAMA_HOST=0.0.0.0\n"


def test_systemd_failed_restart_is_an_error_naming_it(tmp_path: Path) -> None:
    run = CannedCommandRunner(
        {SYSTEMD_COMMANDS[0]: (0, ""), SYSTEMD_COMMANDS[1]: (1, "Unit ollama.service not found.\n")}
    )
    parallelism = SystemdParallelism(run, tmp_path, unit=UNIT)
    with pytest.raises(RunnerError, match="`systemctl restart ollama` exited 1: Unit ollama"):
        parallelism.apply(parallelism.plan(2, 4096))


def test_systemd_without_write_permission_changes_nothing(tmp_path: Path) -> None:
    run = succeeding(SYSTEMD_COMMANDS)
    parallelism = SystemdParallelism(run, tmp_path, writable=lambda path: False, unit=UNIT)
    with pytest.raises(Refused, match="permission denied .*nothing was changed"):
        parallelism.apply(parallelism.plan(2, 4096))
    assert run.calls == []
    assert not parallelism.drop_in.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_write_permission_is_checked_on_the_real_folder(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc").chmod(0o500)
    try:
        assert not can_write(tmp_path / "etc/systemd/system/x.service.d/a.conf")
    finally:
        (tmp_path / "etc").chmod(0o700)
    assert can_write(tmp_path / "etc/systemd/system/x.service.d/a.conf")


def test_failure_detail_comes_from_stderr_of_the_real_runner(tmp_path: Path) -> None:
    fake_systemctl = tmp_path / "bin" / "systemctl"
    fake_systemctl.parent.mkdir()
    fake_systemctl.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "sys.exit('Failed to restart ollama.service: Unit ollama.service not found.')\n"
    )
    fake_systemctl.chmod(0o700)
    run = SubprocessCommandRunner(environ={"PATH": str(fake_systemctl.parent)})
    parallelism = SystemdParallelism(run, tmp_path / "root", unit=UNIT)
    with pytest.raises(RunnerError, match="exited 1: Failed to restart ollama.service"):
        parallelism.apply(parallelism.plan(2, 4096))


def test_manual_plan_is_a_note_and_apply_does_nothing() -> None:
    parallelism = ManualParallelism(
        lambda n, w: f"restart with {n} slots of {w}",
        lambda n, w: ("llama-server", "-np", str(n), "-c", str(n * w)),
    )
    (action,) = parallelism.plan(2, 4096)
    assert action.description == "restart with 2 slots of 4096: llama-server -np 2 -c 8192"
    assert is_note(action)
    parallelism.apply([action])  # nothing to run, nothing raised
