"""The embedded runner for real: llama.cpp (xllamacpp) with the shipped SmolLM2 model.

Tiny on purpose (2 CPU cores shared): windows of at most 512 tokens, at most 16 output tokens
except where a slot must stay busy long enough to be seen.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.ports import free_port
from tests.support.processes import alive
from vibey_gh.errors import BadInput, RunnerError, RunnerNotFound
from vibey_gh.interfaces.slots_interface import (
    REFUSED_OVER_WINDOW,
    ChatSettings,
    RunnerLaunch,
    TurnResult,
)
from vibey_gh.runners.contract import RunningRunner
from vibey_gh.runners.llamacpp.api.watch import LlamaServerWatch
from vibey_gh.runners.llamacpp.embedded import EmbeddedRunner, child_argv
from vibey_gh.runners.llamacpp.models import default_model_path, require_embedded
from vibey_gh.runners.logscan import LogTail, scan_lines
from vibey_gh.runners.process import ensure_port_free
from vibey_gh.state import StateLayout

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

WINDOW = 512
SETTINGS = ChatSettings(window=WINDOW, max_tokens=16, temperature=0.0, seed=42, timeout_s=120)
QUESTION = [{"role": "user", "content": "Name three colours of the rainbow."}]


@pytest.fixture(scope="module")
def two_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningRunner]:
    root = tmp_path_factory.mktemp("embedded")
    launch = RunnerLaunch(
        slots=2,
        window=WINDOW,
        port=free_port(),
        model="default",
        log_path=root / "runner.log",
        threads=2,
    )
    runner = EmbeddedRunner(StateLayout(root / "state")).start(launch)
    try:
        runner.wait_ready(180)
        yield runner
    finally:
        runner.stop()


def test_child_argv_runs_this_interpreter(tmp_path: Path) -> None:
    launch = RunnerLaunch(2, 1024, 8080, "default", tmp_path / "x.log", threads=3)
    argv = child_argv(Path("/m.gguf"), launch)
    assert argv[:3] == [sys.executable, "-m", "vibey_gh.runners.llamacpp.embedded"]
    assert argv[3:] == [
        "--model", "/m.gguf", "--slots", "2", "--window", "1024", "--port", "8080",
        "--parent-pid", str(os.getpid()), "--threads", "3",
    ]  # fmt: skip


def test_it_starts_and_its_log_shows_two_slots_and_the_per_slot_window(
    two_slots: RunningRunner,
) -> None:
    assert two_slots.base_url.startswith("http://127.0.0.1:")
    assert two_slots.preload() > 0.0
    events = scan_lines(two_slots.log_path.read_text().split("\n"), "embedded")
    assert {e.values["n_slots"] for e in events if e.kind == "slots"} == {2}
    assert {e.values["n_ctx"] for e in events if e.kind == "slot_window"} == {WINDOW}
    kv = next(e for e in events if e.kind == "kv_cache")
    assert (kv.values["cells"], kv.values["seqs"], kv.values["streams"]) == (WINDOW, 2, 2)


def test_two_identical_requests_at_temperature_zero_give_identical_answers(
    two_slots: RunningRunner,
) -> None:
    first = two_slots.chat(QUESTION, None, SETTINGS)
    second = two_slots.chat(QUESTION, None, SETTINGS)
    assert first.served and second.served, (first.error, second.error)
    assert first.text and first.text == second.text
    assert first.tool_calls == second.tool_calls
    assert first.prompt_tokens == second.prompt_tokens
    assert first.output_tokens is not None and first.output_tokens <= SETTINGS.max_tokens


def test_a_streamed_turn_carries_llama_cpps_own_timings(two_slots: RunningRunner) -> None:
    """pp and tg come from the runner's `timings` on the stream's last chunk."""
    streamed = ChatSettings(window=WINDOW, max_tokens=4, seed=42, timeout_s=120, stream=True)
    turn = two_slots.chat(QUESTION, None, streamed)
    assert turn.served, turn.error
    timings = turn.runner_timings
    assert timings is not None and timings.prompt_s is not None and timings.output_s is not None
    assert timings.prompt_tokens == (turn.prompt_tokens or 0) - (turn.cached_tokens or 0)
    assert timings.output_tokens == turn.output_tokens
    assert timings.prompt_s + timings.output_s <= turn.latency_s
    assert (timings.output_per_s or 0) > 0


def test_an_over_window_prompt_is_a_failed_turn_refused_over_window(
    two_slots: RunningRunner,
) -> None:
    tail = LogTail(two_slots.log_path, "embedded")
    tail.new_events()
    too_long = [{"role": "user", "content": "apple banana cherry " * 300}]
    turn = two_slots.chat(too_long, None, SETTINGS)
    assert turn.status == 400
    assert turn.error == REFUSED_OVER_WINDOW
    assert not turn.served
    # the runner's own count of the refused prompt, from its refusal
    assert turn.prompt_tokens is not None and turn.prompt_tokens > WINDOW
    for _ in range(50):  # the runner may flush its log line a moment after answering
        errors = [e for e in tail.new_events() if e.kind == "request_error"]
        if errors:
            break
        time.sleep(0.1)
    assert errors and "exceeds the available context size" in errors[0].values["message"]


def test_info_names_the_package_and_the_models_sha256(two_slots: RunningRunner) -> None:
    info = two_slots.info()
    assert info.kind == "embedded"
    assert info.version is not None and info.version.startswith("xllamacpp ")
    assert info.model == str(default_model_path())
    assert info.model_digest == hashlib.sha256(default_model_path().read_bytes()).hexdigest()


def test_production_watch_sees_the_idle_runner_and_its_model(two_slots: RunningRunner) -> None:
    state = LlamaServerWatch(two_slots.base_url).poll()
    assert state.reachable and state.busy is False
    assert state.models == (str(default_model_path()),)


def test_production_watch_sees_a_processing_slot(two_slots: RunningRunner) -> None:
    # long enough to be seen processing by a watch polling without pause, no longer
    long_answer = ChatSettings(window=WINDOW, max_tokens=32, timeout_s=120)
    counting = [{"role": "user", "content": "Count from one to fifty in words."}]
    results: list[TurnResult] = []
    worker = threading.Thread(
        target=lambda: results.append(two_slots.chat(counting, None, long_answer))
    )
    watch = LlamaServerWatch(two_slots.base_url)
    worker.start()
    seen_busy = False
    while worker.is_alive() and not seen_busy:
        seen_busy = watch.poll().busy is True
    worker.join()
    assert seen_busy
    assert results and results[0].status == 200


def test_a_second_runner_on_the_same_port_is_bad_input(
    two_slots: RunningRunner, tmp_path: Path
) -> None:
    port = int(two_slots.base_url.rsplit(":", 1)[1])
    launch = RunnerLaunch(1, 256, port, "default", tmp_path / "second.log")
    with pytest.raises(BadInput, match=f"port {port} on 127.0.0.1 is already in use"):
        EmbeddedRunner().start(launch)
    assert not (tmp_path / "second.log").exists()


def test_stop_leaves_no_process_behind_and_frees_the_port(tmp_path: Path) -> None:
    port = free_port()
    launch = RunnerLaunch(1, 256, port, "default", tmp_path / "runner.log", threads=2)
    runner = EmbeddedRunner(StateLayout(tmp_path / "state")).start(launch)
    runner.wait_ready(180)
    assert runner.pid is not None
    tree = [psutil.Process(runner.pid), *psutil.Process(runner.pid).children(recursive=True)]
    runner.stop()
    assert not any(alive(p.pid) for p in tree)
    ensure_port_free(port)
    assert "main loop exited" in launch.log_path.read_text()  # it shut down, not killed


def test_a_model_that_cannot_load_fails_fast_with_the_log(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF file")
    launch = RunnerLaunch(1, 256, free_port(), str(broken), tmp_path / "runner.log")
    runner = EmbeddedRunner().start(launch)
    with pytest.raises(RunnerError, match="before it was ready") as caught:
        runner.wait_ready(180)
    assert "could not start" in str(caught.value)


def test_the_runner_leaves_when_the_process_that_started_it_is_killed(tmp_path: Path) -> None:
    starter = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from vibey_gh.interfaces.slots_interface import RunnerLaunch\n"
        "from vibey_gh.runners.llamacpp.embedded import EmbeddedRunner\n"
        f"launch = RunnerLaunch(1, 256, {free_port()}, 'default', Path(sys.argv[1]), threads=1)\n"
        "runner = EmbeddedRunner().start(launch)\n"
        "runner.wait_ready(180)\n"
        "print(runner.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", starter, str(tmp_path / "runner.log")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    assert alive(child_pid)
    parent.kill()
    parent.wait()
    for _ in range(300):  # it checks for its parent once a second
        if not alive(child_pid):
            break
        time.sleep(0.1)
    assert not alive(child_pid)
    assert "parent gone, stopping" in (tmp_path / "runner.log").read_text()


def test_a_runner_whose_starter_is_already_gone_does_not_start(tmp_path: Path) -> None:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    gone = int(finished.stdout)
    port = free_port()
    child = subprocess.run(
        [sys.executable, "-m", "vibey_gh.runners.llamacpp.embedded",
         "--model", str(default_model_path()), "--slots", "1", "--window", "256",
         "--port", str(port), "--parent-pid", str(gone)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert child.returncode == 1
    assert "parent gone before start" in child.stderr
    ensure_port_free(port)  # nothing was left listening


def test_a_light_install_without_xllamacpp_is_told_how_to_get_it() -> None:
    require_embedded()  # this install has the embedded extra
    with pytest.raises(RunnerNotFound) as refused:
        require_embedded(lambda name: None)
    assert "pip install 'vibey-gh[embedded]'" in str(refused.value)
    assert refused.value.exit_code == 2


def test_a_busy_runner_leaves_soon_after_sigterm(tmp_path: Path) -> None:
    """Deleting a busy server would wait for llama.cpp's batch in flight (15 s and more here);
    the runner leaves by itself shortly after the signal instead."""
    launch = RunnerLaunch(1, WINDOW, free_port(), "default", tmp_path / "runner.log", threads=2)
    runner = EmbeddedRunner().start(launch)
    try:
        runner.wait_ready(180)
        story = [{"role": "user", "content": "Write a very long story about a dragon."}]
        long_answer = ChatSettings(WINDOW, max_tokens=400, temperature=0.0, seed=42, timeout_s=120)
        worker = threading.Thread(target=runner.chat, args=(story, None, long_answer), daemon=True)
        worker.start()
        while "new prompt" not in launch.log_path.read_text(errors="replace"):
            time.sleep(0.05)
        # stopped once a slot is seen processing the answer: asked, not a pause that hopes so
        watch = LlamaServerWatch(runner.base_url)
        while worker.is_alive() and watch.poll().busy is not True:
            time.sleep(0.05)
        assert worker.is_alive(), "the answer ended before the stop: nothing was busy"
        assert runner.pid is not None
        child = psutil.Process(runner.pid)
        child.terminate()
        child.wait(timeout=30)  # generous: the point is that it goes by itself, not how fast
        log = launch.log_path.read_text(errors="replace")
        assert "embedded runner: SIGTERM, stopping" in log
        assert "at once if llama.cpp is still busy" in log
    finally:
        runner.stop()
