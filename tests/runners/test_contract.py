"""Every registered runner kind keeps the one contract (`runners.contract.RunnerKind`), and the
parts of it `slots apply`, the calibration and the lanes read say what they said before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.ports import free_port
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.parallelism import ManualParallelism, SystemdParallelism, is_note
from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.runners.registry import RUNNER_NAMES, runner_kind

LINUX = PlatformProbes.detect("linux", Path("/nonexistent-root"), CannedCommandRunner())


@pytest.mark.parametrize("name", RUNNER_NAMES)
def test_each_kind_knows_its_name_port_and_production_url(name: str) -> None:
    kind = runner_kind(name)
    assert kind.name == name
    assert kind.default_production_url == f"http://127.0.0.1:{kind.default_port}"
    assert LocalModels(runner=name).production == kind.default_production_url
    assert kind.production_port(None) == kind.default_port
    assert kind.production_port("http://127.0.0.1") == kind.default_port
    assert kind.production_port("http://127.0.0.1:9123") == 9123
    assert kind.production_port("http://127.0.0.1:not-a-port") == kind.default_port
    assert kind.process_names and all(isinstance(n, str) and n for n in kind.process_names)
    assert isinstance(kind.calibrates_this_package, bool)


@pytest.mark.parametrize("name", RUNNER_NAMES)
def test_each_kind_starts_calibration_runners_of_its_own_kind(name: str) -> None:
    assert runner_kind(name).calibration_runner(config=LocalModels(runner=name)).kind == name


@pytest.mark.parametrize("name", RUNNER_NAMES)
def test_each_kinds_watch_says_a_silent_runner_is_unreachable_and_idle(name: str) -> None:
    state = runner_kind(name).watch(f"http://127.0.0.1:{free_port()}").poll()
    assert state.reachable is False and state.busy is False and state.reason


@pytest.mark.parametrize("name", RUNNER_NAMES)
def test_each_kinds_chat_client_reports_a_silent_runner_as_a_failed_turn(name: str) -> None:
    client = runner_kind(name).chat_client(f"http://127.0.0.1:{free_port()}", "m")
    try:
        turn = client.chat(
            [{"role": "user", "content": "hi"}],
            None,
            ChatSettings(window=512, max_tokens=8, timeout_s=5.0),
        )
    finally:
        client.close()
    assert turn.status is None and turn.error


@pytest.mark.parametrize("name", RUNNER_NAMES)
def test_each_kind_plans_its_parallelism(name: str) -> None:
    config = LocalModels(runner=name, production_url="http://127.0.0.1:8099")
    actions = runner_kind(name).parallelism(config, LINUX).plan(2, 4096)
    assert actions and all(action.description for action in actions)


def test_embedded_and_simulated_are_restarted_with_runner_serve() -> None:
    for name in ("embedded", "simulated"):
        config = LocalModels(runner=name, production_url="http://127.0.0.1:8099")
        parallelism = runner_kind(name).parallelism(config, LINUX)
        (note,) = parallelism.plan(2, 4096)
        assert isinstance(parallelism, ManualParallelism) and is_note(note)
        assert note.description == (
            f"restart the {name} runner with 2 slot(s) of 4096 tokens: vibey-gh runner serve "
            f"--runner {name} --slots 2 --window 4096 --port 8099"
        )
    named = LocalModels(runner="embedded", model="/models/m.gguf")
    (note,) = runner_kind("embedded").parallelism(named, LINUX).plan(1, 2048)
    assert note.description.endswith("--port 8080 --model /models/m.gguf")


def test_llama_server_prints_its_own_restart_command() -> None:
    config = LocalModels(
        runner="llama-server", model="/models/m.gguf", runner_binary="/opt/llama-server"
    )
    (note,) = runner_kind("llama-server").parallelism(config, LINUX).plan(3, 4096)
    assert is_note(note)
    assert note.description.endswith(
        "/opt/llama-server -m /models/m.gguf -np 3 -c 12288 --host 127.0.0.1 --port 8080"
    )


def test_llama_server_shows_the_resolved_model_file(tmp_path: Path) -> None:
    model = tmp_path / "q.gguf"
    model.write_bytes(b"GGUF")
    config = LocalModels(runner="llama-server", model=str(model))
    (note,) = runner_kind("llama-server").parallelism(config, LINUX).plan(1, 1024)
    assert f"llama-server -m {model} -np 1 -c 1024" in note.description


def test_ollama_is_set_through_the_platforms_service(tmp_path: Path) -> None:
    (tmp_path / "run/systemd/system").mkdir(parents=True)  # systemd is init here
    probes = PlatformProbes.detect("linux", tmp_path, CannedCommandRunner())
    parallelism = runner_kind("ollama").parallelism(LocalModels(runner="ollama"), probes)
    assert isinstance(parallelism, SystemdParallelism) and parallelism.root == tmp_path


def test_model_file_bytes_size_a_gguf_and_never_an_ollama_name(tmp_path: Path) -> None:
    model = tmp_path / "q.gguf"
    model.write_bytes(b"GGUF-123")
    for name in ("embedded", "llama-server"):
        kind = runner_kind(name)
        assert kind.model_file_bytes(LocalModels(runner=name, model=str(model))) == 8
        missing = LocalModels(runner=name, model=str(tmp_path / "gone.gguf"))
        assert kind.model_file_bytes(missing) is None
    ollama = LocalModels(runner="ollama", model=str(model))
    assert runner_kind("ollama").model_file_bytes(ollama) is None


def test_in_package_kinds_are_the_ones_this_package_serves() -> None:
    serves_itself = {name for name in RUNNER_NAMES if runner_kind(name).calibrates_this_package}
    assert serves_itself == {"embedded", "simulated"}


def test_simulated_production_is_identified_without_a_server() -> None:
    info = runner_kind("simulated").identify_production(LocalModels(runner="simulated"))
    assert info.kind == "simulated" and info.version and info.model_digest
