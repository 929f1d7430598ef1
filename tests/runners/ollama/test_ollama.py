from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import httpx
import psutil
import pytest

from tests.support.ports import free_port
from tests.support.runners import recorded, write_fake_ollama
from vibey_gh.errors import RunnerError, RunnerNotFound
from vibey_gh.interfaces.slots_interface import (
    REFUSED_OVER_WINDOW,
    ChatSettings,
    RunnerLaunch,
    ToolCall,
)
from vibey_gh.runners.logscan import LogTail
from vibey_gh.runners.ollama.chat import OllamaChatClient, chat_payload, parse_chat
from vibey_gh.runners.ollama.runner import OllamaRunner, ollama_env

SETTINGS = ChatSettings(window=8192, max_tokens=768, temperature=0.0, seed=42)


def parse(relative: str):  # type: ignore[no-untyped-def]
    answer = recorded(f"ollama/{relative}.json")
    return parse_chat(answer.status, answer.body, 1.0, 4.0)


def launch(tmp_path: Path, **changes: object) -> RunnerLaunch:
    values: dict[str, object] = {
        "slots": 3,
        "window": 8192,
        "port": 11435,
        "model": "llama3.2:3b",
        "log_path": tmp_path / "ollama.log",
    }
    values.update(changes)
    return RunnerLaunch(**values)  # type: ignore[arg-type]


# --- request shape ---------------------------------------------------------------------------


def test_chat_payload_turns_truncation_and_shift_off_with_fixed_num_ctx() -> None:
    messages = [{"role": "user", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": "read_file"}}]
    payload = chat_payload("llama3.2:3b", messages, tools, SETTINGS)
    assert payload == {
        "model": "llama3.2:3b",
        "messages": messages,
        "stream": False,
        "truncate": False,
        "shift": False,
        "options": {"num_ctx": 8192, "temperature": 0.0, "seed": 42, "num_predict": 768},
        "tools": tools,
    }
    assert "tools" not in chat_payload("m", messages, None, SETTINGS)


def test_environment_sets_ours_keeps_the_model_store_and_lets_extra_env_win(
    tmp_path: Path,
) -> None:
    base = {"OLLAMA_MODELS": "/srv/models", "PATH": "/usr/bin", "OLLAMA_NUM_PARALLEL": "8"}
    env = ollama_env(launch(tmp_path, extra_env={"OLLAMA_FLASH_ATTENTION": "1"}), base)
    assert env["OLLAMA_MODELS"] == "/srv/models" and env["PATH"] == "/usr/bin"
    assert env["OLLAMA_HOST"] == "127.0.0.1:11435"
    assert env["OLLAMA_NUM_PARALLEL"] == "3"
    assert env["OLLAMA_CONTEXT_LENGTH"] == "8192"
    assert env["OLLAMA_NOPRUNE"] == "1" and env["OLLAMA_DEBUG"] == "1"
    assert env["OLLAMA_KEEP_ALIVE"] == "-1" and env["OLLAMA_MAX_LOADED_MODELS"] == "1"
    assert env["OLLAMA_FLASH_ATTENTION"] == "1"
    assert base["OLLAMA_NUM_PARALLEL"] == "8"  # the caller's mapping is left alone


# --- recorded answers, all three eras --------------------------------------------------------


def test_era_a_answers_parse() -> None:
    turn = parse("era_a/chat_stop")
    assert turn.served and turn.text.startswith("The configuration lives")
    assert (turn.prompt_tokens, turn.output_tokens) == (1893, 41)
    calls = parse("era_a/chat_tool_calls")
    assert calls.served
    assert calls.tool_calls == (ToolCall("read_file", {"path": "src/vibey_gh/config.py"}),)


def test_era_b_tool_calls_keep_order_and_object_arguments() -> None:
    turn = parse("era_b/chat_tool_calls")
    assert turn.tool_calls == (
        ToolCall("read_file", {"path": "src/vibey_gh/config.py"}),
        ToolCall("list_files", {"folder": "src", "depth": 2}),
    )
    assert parse("era_b/chat_length").finish_reason == "length"


def test_era_c_answer_parses() -> None:
    turn = parse("era_c/chat_stop")
    assert turn.served and turn.finish_reason == "stop"


@pytest.mark.parametrize(
    "relative", ["era_b/over_window", "era_c/over_window", "era_c/prompt_longer_than_context"]
)
def test_over_window_in_every_era_is_refused(relative: str) -> None:
    turn = parse(relative)
    assert turn.status == 400 and turn.error == REFUSED_OVER_WINDOW and not turn.served


def test_tool_call_parse_error_keeps_status_and_text() -> None:
    turn = parse("era_b/tool_call_parse_error")
    assert turn.status == 500
    assert turn.error is not None
    assert turn.error.startswith("http 500: error parsing tool call: raw=")


def test_runner_stopped_is_a_failed_turn() -> None:
    turn = parse("era_c/runner_stopped")
    assert turn.error is not None and turn.error.startswith("http 500: model runner has")


def test_200_without_done_reason_is_failed() -> None:
    turn = parse("era_b/no_done_reason")
    assert turn.status == 200 and turn.finish_reason is None
    assert turn.error == "no done reason" and not turn.served


def test_load_answer_is_not_an_answer_to_a_turn() -> None:
    turn = parse("era_b/load")
    assert turn.finish_reason == "load" and not turn.served
    assert turn.error is not None and "load" in turn.error


# --- HTTP client -----------------------------------------------------------------------------


def test_preload_sends_the_turn_settings_and_needs_a_load_answer() -> None:
    bodies: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        answer = recorded("ollama/era_b/load.json")
        return httpx.Response(answer.status, json=answer.body)

    client = OllamaChatClient(
        "http://ollama.test:11435", "llama3.2:3b", 8192, transport=httpx.MockTransport(handler)
    )
    assert client.preload() >= 0.0
    assert bodies[0]["messages"] == [] and bodies[0]["shift"] is False
    assert bodies[0]["options"] == {  # the same num_ctx the turns use, or Ollama reloads
        "num_ctx": 8192,
        "temperature": 0.0,
        "seed": 42,
        "num_predict": 768,
    }


def test_preload_refused_raises_runner_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"error": "model 'nope' not found"})

    client = OllamaChatClient("http://x:1", "nope", 4096, transport=httpx.MockTransport(handler))
    with pytest.raises(RunnerError, match="model 'nope' not found") as refused:
        client.preload()
    assert str(refused.value).endswith("; pull it first: ollama pull nope")


def test_missing_binary_is_runner_not_found(tmp_path: Path) -> None:
    with pytest.raises(RunnerNotFound, match="not found"):
        OllamaRunner().start(launch(tmp_path, binary=str(tmp_path / "no-ollama")))


# --- the whole lifecycle against a stand-in `ollama serve` -----------------------------------


def read_record(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_lifecycle_against_a_stand_in_server(tmp_path: Path) -> None:
    binary = write_fake_ollama(tmp_path / "bin")
    record = tmp_path / "record.jsonl"
    port = free_port()
    run = launch(
        tmp_path,
        slots=2,
        window=512,
        port=port,
        binary=str(binary),
        extra_env={"FAKE_OLLAMA_RECORD": str(record)},
    )
    server = OllamaRunner().start(run)
    try:
        server.wait_ready(30)
        assert server.preload() >= 0.0
        settings = ChatSettings(window=512, max_tokens=8)
        served = server.chat([{"role": "user", "content": "short question"}], None, settings)
        refused = server.chat([{"role": "user", "content": "x" * 4000}], None, settings)
        info = server.info()
        events = LogTail(run.log_path, "ollama").new_events()
        tree = psutil.Process(server.pid).children(recursive=True)
    finally:
        server.stop()
    assert served.served and served.text == "The answer."
    assert refused.error == REFUSED_OVER_WINDOW
    assert info.version == "0.32.15" and info.model_digest is not None
    entries = read_record(record)
    env = next(e["data"] for e in entries if e["kind"] == "env")
    assert isinstance(env, dict)
    assert env["OLLAMA_NUM_PARALLEL"] == "2" and env["OLLAMA_HOST"] == f"127.0.0.1:{port}"
    chats = [e["data"] for e in entries if e["kind"] == "chat"]
    assert all(isinstance(c, dict) and c["truncate"] is False for c in chats)
    kinds = {(e.kind, tuple(sorted(e.values.items()))) for e in events}
    assert ("slots", (("n_ctx_total", 1024), ("n_slots", 2))) in kinds
    assert ("slot_window", (("n_ctx", 512),)) in kinds
    assert any(e.kind == "request_error" for e in events)
    # The engine ran in a session of its own; stopping still reached it.
    assert tree, "the stand-in should have started an engine child"
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in tree)
    assert not psutil.pid_exists(server.pid or -1) or (
        psutil.Process(server.pid).status() == psutil.STATUS_ZOMBIE
    )


@pytest.mark.ollama
@pytest.mark.skipif(shutil.which("ollama") is None, reason="no ollama binary on PATH")
def test_live_ollama_serves_and_stops(tmp_path: Path) -> None:
    model = os.environ.get("VIBEY_GH_OLLAMA_TEST_MODEL", "llama3.2:1b")
    run = launch(tmp_path, slots=1, window=2048, port=free_port(), model=model)
    server = OllamaRunner().start(run)
    try:
        server.wait_ready(60)
        info = server.info()
        if info.model_digest is None:
            pytest.skip(f"model {model} is not pulled")
        server.preload()
        turn = server.chat(
            [{"role": "user", "content": "Say OK."}], None, ChatSettings(window=2048, max_tokens=8)
        )
    finally:
        server.stop()
    assert turn.served
    assert info.version


def test_ollamas_counts_and_nanoseconds_are_its_prompt_and_generation_speed() -> None:
    timings = parse("era_c/chat_stop").runner_timings
    assert timings is not None
    assert timings.prompt_s == pytest.approx(6.012345678)
    assert timings.prompt_per_s == pytest.approx(1893 / 6.012345678)
    assert timings.output_per_s == pytest.approx(41 / 3.012345678)
    refused = parse_chat(200, {"done": True, "done_reason": "stop", "eval_count": -3}, 0.0, 1.0)
    assert refused.runner_timings is not None and not refused.runner_timings.reported_any
