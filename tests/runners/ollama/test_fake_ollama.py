"""The `ollama serve` stand-in is as strict as Ollama: what Ollama refuses, it refuses, in
Ollama's words (runners.md §4, from Ollama's api/types.go and server/routes.go)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.ports import free_port
from tests.support.runners import write_fake_ollama
from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.lanes.tools import tool_call_message, tool_result_message
from vibey_gh.runners.ollama.chat import OllamaChatClient, chat_payload

MODEL = "llama3.2:3b"
SETTINGS = ChatSettings(window=4096, max_tokens=16)
OPENAI_MESSAGES = [
    {"role": "user", "content": "read it"},
    tool_call_message("call_1", "read_file", {"path": "a.py"}),
    tool_result_message("call_1", "read_file", "x = 1\n"),
]


@contextmanager
def stand_in(tmp_path: Path, **env: str) -> Iterator[str]:
    binary = write_fake_ollama(tmp_path / "bin")
    port = free_port()
    child_env = {"PATH": os.environ.get("PATH", ""), "OLLAMA_HOST": f"127.0.0.1:{port}", **env}
    log = (tmp_path / "ollama.log").open("wb")
    child = subprocess.Popen([str(binary), "serve"], env=child_env, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(url + "/api/version", timeout=1.0)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield url
    finally:
        child.terminate()
        child.wait(10)
        log.close()


def chat(url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(url + "/api/chat", json=body, timeout=10.0)


def body_with(**changes: Any) -> dict[str, Any]:
    body = chat_payload(MODEL, OPENAI_MESSAGES, None, SETTINGS)
    body.update(changes)
    return body


def loaded(url: str) -> list[str]:
    return [m["name"] for m in httpx.get(url + "/api/ps", timeout=5.0).json()["models"]]


@pytest.fixture(scope="module")
def ollama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with stand_in(tmp_path_factory.mktemp("ollama")) as url:
        yield url


def test_string_arguments_are_refused_in_ollamas_words(ollama: str) -> None:
    openai_form = body_with(messages=OPENAI_MESSAGES)  # arguments as a JSON string
    answer = chat(ollama, openai_form)
    assert answer.status_code == 400
    assert answer.json() == {"error": "Value looks like object, but can't find closing '}' symbol"}
    assert chat(ollama, body_with()).status_code == 200  # the same turn, in Ollama's form


def test_before_0_14_string_arguments_get_gos_type_error(tmp_path: Path) -> None:
    with stand_in(tmp_path, FAKE_OLLAMA_VERSION="0.13.5") as url:
        answer = chat(url, body_with(messages=OPENAI_MESSAGES))
    assert answer.status_code == 400
    assert answer.json()["error"] == (
        "json: cannot unmarshal string into Go struct field "
        "ChatRequest.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments"
    )


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"stream": "false"}, "Go struct field ChatRequest.stream of type bool"),
        ({"truncate": 0}, "cannot unmarshal number into Go struct field ChatRequest.truncate"),
        ({"model": 3}, "Go struct field ChatRequest.model of type string"),
        ({"messages": {"role": "user"}}, "ChatRequest.messages of type []api.Message"),
        ({"options": [1]}, "ChatRequest.options of type map[string]interface {}"),
        ({"keep_alive": True}, "Unsupported type: 'bool'"),
        ({"keep_alive": "soon"}, 'time: invalid duration "soon"'),
    ],
)
def test_fields_of_the_wrong_type_are_refused(
    ollama: str, changes: dict[str, Any], error: str
) -> None:
    answer = chat(ollama, body_with(**changes))
    assert answer.status_code == 400 and error in answer.json()["error"]


def test_a_message_field_of_the_wrong_type_names_the_whole_path(ollama: str) -> None:
    messages = [{"role": "user", "content": ["a", "list"]}]
    answer = chat(ollama, body_with(messages=messages))
    assert answer.status_code == 400
    assert answer.json()["error"] == (
        "json: cannot unmarshal array into Go struct field ChatRequest.messages.content "
        "of type string"
    )


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"num_ctx": "4096"}, 'option "num_ctx" must be of type integer'),
        ({"temperature": "0"}, 'option "temperature" must be of type float32'),
        ({"stop": "END"}, 'option "stop" must be of type array'),
    ],
)
def test_options_of_the_wrong_type_are_refused_after_decoding(
    ollama: str, options: dict[str, Any], error: str
) -> None:
    answer = chat(ollama, body_with(options=options))
    assert answer.status_code == 500 and answer.json() == {"error": error}


def test_without_stream_false_the_answer_is_streamed(ollama: str) -> None:
    body = body_with()
    del body["stream"]
    answer = chat(ollama, body)
    assert answer.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "stop"
    assert not any(line["done"] for line in lines[:-1])
    assert "".join(line["message"]["content"] for line in lines) == "The answer."
    client = OllamaChatClient(ollama, MODEL)
    try:
        turn = client.chat(OPENAI_MESSAGES, None, SETTINGS)
    finally:
        client.close()
    assert turn.served  # the client asks for one answer, not a stream


def test_a_model_stays_listed_for_the_keep_alive_then_unloads(tmp_path: Path) -> None:
    with stand_in(tmp_path, OLLAMA_KEEP_ALIVE="1s") as url:
        assert loaded(url) == []
        assert chat(url, body_with()).status_code == 200
        assert loaded(url) == [MODEL]
        # asked until it unloads (a second from the answer), not slept through a guess
        deadline = time.monotonic() + 10
        while loaded(url) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert loaded(url) == []


def test_default_keep_alive_is_five_minutes_and_keep_alive_0_unloads(ollama: str) -> None:
    assert chat(ollama, body_with()).status_code == 200
    ps = httpx.get(ollama + "/api/ps", timeout=5.0).json()["models"]
    expires = time.mktime(time.strptime(ps[0]["expires_at"], "%Y-%m-%dT%H:%M:%SZ"))
    assert 280 < expires - time.mktime(time.gmtime()) <= 301
    unload = chat(ollama, {"model": MODEL, "messages": [], "keep_alive": 0})
    assert unload.json()["done_reason"] == "unload" and loaded(ollama) == []


def test_version_names_the_client_and_any_server_that_answers(tmp_path: Path) -> None:
    binary = write_fake_ollama(tmp_path / "bin")
    alone = {"PATH": os.environ.get("PATH", ""), "OLLAMA_HOST": f"127.0.0.1:{free_port()}"}
    said = subprocess.run([str(binary), "--version"], env=alone, capture_output=True, text=True)
    assert said.stdout.splitlines() == [
        "Warning: could not connect to a running Ollama instance",
        "Warning: client version is 0.32.15",
    ]
    with stand_in(tmp_path) as url:
        host = {**alone, "OLLAMA_HOST": url.removeprefix("http://")}
        said = subprocess.run([str(binary), "--version"], env=host, capture_output=True, text=True)
    assert said.stdout.strip() == "ollama version is 0.32.15"


READ_TOOL = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "parameters": {"type": "object", "properties": {"path": {}, "lines": {}}},
        },
    }
]


def test_a_streamed_tool_call_arrives_whole_in_a_chunk_of_its_own(ollama: str) -> None:
    messages = [{"role": "user", "content": "call read_file"}]
    body = chat_payload(MODEL, messages, READ_TOOL, SETTINGS)
    body["stream"] = True
    lines = [json.loads(line) for line in chat(ollama, body).text.splitlines()]
    with_calls = [line for line in lines if line["message"].get("tool_calls")]
    assert len(with_calls) == 1 and with_calls[0]["message"]["content"] == ""
    call = with_calls[0]["message"]["tool_calls"][0]["function"]
    assert call["arguments"] == {"lines": "x", "path": "x"}  # an object, never a string
    assert lines[-1]["done"] is True and lines[-1]["eval_count"] == 9


@pytest.mark.parametrize(
    "messages,tools",
    [
        ([{"role": "user", "content": "call read_file"}], READ_TOOL),
        ([{"role": "user", "content": "what is in a.py?"}], READ_TOOL),
        (OPENAI_MESSAGES, None),
    ],
)
def test_streamed_and_unstreamed_answers_of_a_turn_agree(
    ollama: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> None:
    client = OllamaChatClient(ollama, MODEL)
    try:
        whole = client.chat(messages, tools, SETTINGS)
        parts = client.chat(messages, tools, ChatSettings(window=4096, max_tokens=16, stream=True))
    finally:
        client.close()
    assert whole.served and parts.served, parts.error
    assert (parts.text, parts.tool_calls, parts.finish_reason) == (
        whole.text,
        whole.tool_calls,
        whole.finish_reason,
    )
    assert (parts.prompt_tokens, parts.output_tokens) == (whole.prompt_tokens, whole.output_tokens)
    assert parts.streamed and parts.first_token is not None and parts.last_token is not None
    assert parts.started < parts.first_token <= parts.last_token <= parts.ended
    assert parts.token_chunks == (1 if whole.tool_calls else len(whole.text.split()))


def test_an_error_after_the_stream_began_fails_the_turn() -> None:
    from vibey_gh.runners.ollama.chat import OllamaChunks

    chunks = OllamaChunks()
    assert chunks.take({"message": {"role": "assistant", "content": "The "}, "done": False})
    assert not chunks.take({"error": "model runner has unexpectedly stopped"})
    result = chunks.result(200, 0.0, 1.0)
    assert not result.served
    assert result.error == "error in answer: model runner has unexpectedly stopped"
    cut = OllamaChunks()
    cut.take({"message": {"role": "assistant", "content": "The "}, "done": False})
    assert cut.result(200, 0.0, 1.0).error == "the stream ended without its done line"
