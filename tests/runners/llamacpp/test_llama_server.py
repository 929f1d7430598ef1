from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import psutil
import pytest

from tests.support.ports import free_port
from tests.support.runners import FIXTURES, write_python_executable
from vibey_gh.errors import RunnerNotFound
from vibey_gh.interfaces.slots_interface import REFUSED_OVER_WINDOW, ChatSettings, RunnerLaunch
from vibey_gh.runners.builds import keyed_to_binary
from vibey_gh.runners.llamacpp.llama_server import (
    LlamaServerRunner,
    find_binary,
    server_argv,
)
from vibey_gh.runners.logscan import scan_lines
from vibey_gh.state import StateLayout

SETTINGS = ChatSettings(window=256, max_tokens=8, timeout_s=120)


def test_runner_args_follow_the_arguments_the_tool_owns(tmp_path: Path) -> None:
    launch = RunnerLaunch(2, 1024, 8091, "x", tmp_path / "l.log")
    argv = server_argv("/opt/llama-server", Path("/m/q.gguf"), launch, ["-fa", "on", "-ngl", "99"])
    assert argv[-4:] == ["-fa", "on", "-ngl", "99"]
    assert argv[argv.index("-np") + 1] == "2" and argv[argv.index("-c") + 1] == "2048"


def test_argv_asks_for_n_slots_of_the_window_on_loopback_without_context_shift(
    tmp_path: Path,
) -> None:
    launch = RunnerLaunch(3, 4096, 8091, "x", tmp_path / "l.log", threads=4)
    assert server_argv("/opt/llama-server", Path("/m/q.gguf"), launch) == [
        "/opt/llama-server", "-m", "/m/q.gguf", "-np", "3", "-c", "12288",
        "--host", "127.0.0.1", "--port", "8091", "--metrics", "--no-context-shift",
        "-t", "4",
    ]  # fmt: skip


def test_missing_binary_is_runner_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RunnerNotFound, match="llama-server is not on PATH"):
        find_binary(None)
    with pytest.raises(RunnerNotFound, match="not found or not executable"):
        find_binary(str(tmp_path / "llama-server"))


def test_a_missing_binary_is_reported_before_anything_starts(tmp_path: Path) -> None:
    launch = RunnerLaunch(1, 256, free_port(), "default", tmp_path / "l.log", binary="/no/such")
    with pytest.raises(RunnerNotFound):
        LlamaServerRunner().start(launch)
    assert not launch.log_path.exists()


def run_lifecycle(binary: str, tmp_path: Path) -> None:
    launch = RunnerLaunch(
        2, 256, free_port(), "default", tmp_path / "llama-server.log", binary=binary, threads=2
    )
    runner = LlamaServerRunner(StateLayout(tmp_path / "state")).start(launch)
    try:
        runner.wait_ready(180)
        served = runner.chat([{"role": "user", "content": "Say hello."}], None, SETTINGS)
        refused = runner.chat([{"role": "user", "content": "word " * 400}], None, SETTINGS)
        info = runner.info()
        props = httpx.get(runner.base_url + "/props", timeout=5).json()
        pid = runner.pid
    finally:
        runner.stop()
    assert served.served, served.error
    assert refused.error == REFUSED_OVER_WINDOW
    # a build that names itself is its name; one that names nothing (a build from a source
    # distribution without git: "b0-unknown") is keyed by the binary's own sha256 as well
    assert info.kind == "llama-server"
    assert info.version == keyed_to_binary(props["build_info"], binary)
    assert info.model_digest is not None
    events = scan_lines(launch.log_path.read_text().split("\n"), "llama-server")
    assert {e.values["n_ctx"] for e in events if e.kind == "slot_window"} == {256}
    assert pid is not None
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_lifecycle_against_real_llama_cpp_behind_llama_servers_command_line(
    tmp_path: Path,
) -> None:
    shim = write_python_executable(
        tmp_path / "bin" / "llama-server", (FIXTURES / "llama_server_shim.py").read_text()
    )
    run_lifecycle(str(shim), tmp_path)


@pytest.mark.integration
@pytest.mark.timeout(300)
@pytest.mark.skipif(shutil.which("llama-server") is None, reason="no llama-server on PATH")
def test_live_llama_server_on_path(tmp_path: Path) -> None:
    binary = shutil.which("llama-server")
    assert binary is not None
    run_lifecycle(binary, tmp_path)


# --- a real llama-server (tools/install-llama-server.sh builds it; `make test` puts it on PATH)

LIVE = shutil.which("llama-server")
live = pytest.mark.skipif(
    LIVE is None, reason="no llama-server on PATH (tools/install-llama-server.sh builds one)"
)


@pytest.mark.integration
@pytest.mark.timeout(300)
@live
def test_live_runner_args_reach_llama_server_and_its_log_facts_are_read(tmp_path: Path) -> None:
    assert LIVE is not None
    launch = RunnerLaunch(
        2, 256, free_port(), "default", tmp_path / "l.log", binary=LIVE, threads=2
    )
    runner_args = ["--alias", "production-alias", "-b", "64"]
    runner = LlamaServerRunner(runner_args=runner_args).start(launch)
    try:
        runner.wait_ready(180)
        argv = psutil.Process(runner.pid).cmdline()
        props = httpx.get(runner.base_url + "/props", timeout=5).json()
        refused = runner.chat([{"role": "user", "content": "word " * 400}], None, SETTINGS)
    finally:
        runner.stop()
    assert argv[-4:] == runner_args
    assert props["model_alias"] == "production-alias"  # llama-server itself took them
    assert props["total_slots"] == 2 and props["default_generation_settings"]["n_ctx"] == 256
    text = launch.log_path.read_text()
    assert refused.error == REFUSED_OVER_WINDOW
    events = scan_lines(text.split("\n"), "llama-server")
    assert {e.values["n_ctx"] for e in events if e.kind == "slot_window"} == {256}
    assert 2 in {e.values.get("n_slots") for e in events if e.kind == "slots"}


@pytest.mark.integration
@pytest.mark.timeout(120)
@live
def test_live_version_reads_as_props_spells_it_and_bad_runner_args_are_refused(
    tmp_path: Path,
) -> None:
    assert LIVE is not None
    from vibey_gh.errors import BadInput
    from vibey_gh.runners.llamacpp.identify import llama_server_version
    from vibey_gh.runners.llamacpp.serving import check_runner_args

    launch = RunnerLaunch(1, 256, free_port(), "default", tmp_path / "l.log", binary=LIVE)
    runner = LlamaServerRunner().start(launch)
    try:
        runner.wait_ready(180)
        build_info = httpx.get(runner.base_url + "/props", timeout=5).json()["build_info"]
    finally:
        runner.stop()
    assert llama_server_version(check_runner_args(LIVE, ["-fa", "off"])) == build_info
    with pytest.raises(BadInput, match="runner_args: llama-server refuses them"):
        check_runner_args(LIVE, ["--no-such-flag"])
