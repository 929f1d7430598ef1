"""The recipe "Add a runner kind" (docs/architecture.md), followed: the echo kind is one folder
(tests/runners/echo/, standing in for runners/echo/) and one line in the registry's KINDS, and
with that line every question the system asks of a kind is answered by it; without it, the
config refuses the name as it refuses any unknown runner."""

from __future__ import annotations

from pathlib import Path

import pytest

import vibey_gh
from tests.runners.echo.kind import NAME, EchoKind
from tests.support.kind_names import misplaced_names
from vibey_gh.config import CONFIG_ENV, LocalModels, load_config
from vibey_gh.errors import ConfigError
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.runners import registry
from vibey_gh.runners.calibration_needs import OK, binary_check, model_check
from vibey_gh.runners.logscan import LogTail, scan_lines

ECHO_FOLDER = Path(__file__).resolve().parent / "echo"
PACKAGE = Path(vibey_gh.__file__).resolve().parent


@pytest.fixture
def echo_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    # the one line a new kind adds to runners/registry.py
    monkeypatch.setattr(registry, "KINDS", (*registry.KINDS, EchoKind()))


def _config_file(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "vibey-gh.toml"
    path.write_text(f'[local_models]\nrunner = "{NAME}"\nmodel = "m"\n', encoding="utf-8")
    return {CONFIG_ENV: str(path)}


def test_without_its_registry_line_the_config_refuses_the_kind(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"runner must be one of .*, not '{NAME}'"):
        load_config(environ=_config_file(tmp_path))


@pytest.mark.usefixtures("echo_registered")
def test_with_it_the_config_takes_the_kind_and_its_default_port(tmp_path: Path) -> None:
    config = load_config(environ=_config_file(tmp_path))
    assert config.runner == NAME and config.production == "http://127.0.0.1:7777"
    assert NAME in registry.registered_names()
    assert "echo-runner" in registry.runner_markers()


@pytest.mark.usefixtures("echo_registered")
def test_every_question_by_name_is_answered_by_the_kind() -> None:
    config = LocalModels(runner=NAME, model="m")
    assert registry.identify_production(config).kind == NAME
    assert registry.production_watch(config).poll().busy is False
    assert registry.production_settings(config).fingerprinted == {}
    assert registry.measured_settings(config, {"x": "1"}) == {}
    assert registry.production_drift(config) == []
    assert model_check(config, None).status == OK
    assert binary_check(config, None, None).status == OK
    probes = PlatformProbes.detect("linux", Path("/nonexistent-root"), CannedCommandRunner())
    (note,) = registry.runner_kind(NAME).parallelism(config, probes).plan(2, 512)
    assert note.description == "restart echo with 2 slot(s) of 512 tokens"
    (event,) = scan_lines(["echo serving 3 slots"], NAME)
    assert event.kind == "slots" and event.values == {"n_slots": 3}


@pytest.mark.usefixtures("echo_registered")
def test_its_calibration_runner_and_chat_client_speak_its_wire_format(tmp_path: Path) -> None:
    settings = ChatSettings(window=256)
    client = registry.runner_kind(NAME).chat_client("http://127.0.0.1:7777", "m")
    turn = client.chat([{"role": "user", "content": "hello there"}], None, settings)
    assert turn.served and turn.text == "hello there" and turn.output_tokens == 2
    log = tmp_path / "echo.log"
    running = registry.runner_for(NAME).start(RunnerLaunch(2, 256, 7778, "m", log))
    assert running.chat([{"role": "user", "content": "hi"}], None, settings).text == "hi"
    (event,) = LogTail(log, NAME).new_events()
    assert event.values == {"n_slots": 2}
    running.stop()


def test_its_name_is_spelled_in_its_folder_only() -> None:
    homes = {NAME: (ECHO_FOLDER,)}
    assert misplaced_names(PACKAGE, homes, PACKAGE / "runners" / "registry.py") == []
    assert misplaced_names(ECHO_FOLDER, homes, PACKAGE / "runners" / "registry.py") == []
