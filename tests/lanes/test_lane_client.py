"""The lanes' production client: which API each runner is asked through, and Ollama's form
(the same client the calibration uses: `runners.ollama.OllamaChatClient`).

Ollama cannot run here: its side is an httpx mock answering in the /api/chat format of the
runner reference (§4); a live test runs only where an `ollama` with a model answers.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import httpx
import pytest

from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.lanes.client import production_client
from vibey_gh.lanes.tools import tool_call_message, tool_definitions, tool_result_message
from vibey_gh.runners.http.openai_chat import OpenAIChatClient
from vibey_gh.runners.ollama.chat import OllamaChatClient, ollama_messages

SETTINGS = ChatSettings(window=8192, max_tokens=64)
OPENAI_MESSAGES = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "plan"},
    tool_call_message("call_1", "read_file", {"path": "a.py"}),
    tool_result_message("call_1", "read_file", "x = 1\n"),
]


def test_each_runner_kind_gets_its_client() -> None:
    embedded = production_client(LocalModels(runner="embedded", production_url="http://h:1"))
    ollama = production_client(LocalModels(runner="ollama", model="qwen3:8b"))
    try:
        assert isinstance(embedded, OpenAIChatClient) and embedded.base_url == "http://h:1"
        assert isinstance(ollama, OllamaChatClient)
        assert (ollama.base_url, ollama.model) == ("http://127.0.0.1:11434", "qwen3:8b")
    finally:
        embedded.close()
        ollama.close()


def test_ollama_gets_objects_for_arguments_and_the_records_keep_strings() -> None:
    converted = ollama_messages(OPENAI_MESSAGES)
    assert converted[2]["tool_calls"][0]["function"]["arguments"] == {"path": "a.py"}
    assert converted[3]["tool_name"] == "read_file" and converted[3]["tool_call_id"] == "call_1"
    assert "tool_name" not in OPENAI_MESSAGES[3]
    assert isinstance(OPENAI_MESSAGES[2]["tool_calls"][0]["function"]["arguments"], str)
    broken = [{"role": "assistant", "tool_calls": [{"function": {"arguments": "{nope"}}]}]
    assert ollama_messages(broken) == broken


def test_an_ollama_turn_is_sent_and_read_in_ollamas_format() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append({"path": request.url.path, "body": json.loads(request.content)})
        return httpx.Response(
            200,
            json={
                "model": "qwen3:8b",
                "created_at": "2026-09-24T13:39:00Z",
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "call_ab12cd34",
                            "function": {
                                "index": 0,
                                "name": "read_file",
                                "arguments": {"path": "b.py"},
                            },
                        }
                    ],
                },
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 812,
                "eval_count": 21,
            },
        )

    client = OllamaChatClient(
        "http://127.0.0.1:11434", "qwen3:8b", transport=httpx.MockTransport(handler)
    )
    try:
        result = client.chat(OPENAI_MESSAGES, tool_definitions(), SETTINGS)
    finally:
        client.close()
    body = seen[0]["body"]
    assert seen[0]["path"] == "/api/chat"
    assert body["model"] == "qwen3:8b" and body["stream"] is False
    assert body["truncate"] is False and body["shift"] is False
    assert body["options"]["num_ctx"] == 8192 and body["options"]["seed"] == 42
    assert body["options"]["temperature"] == 0 and body["options"]["num_predict"] == 64
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"path": "a.py"}
    assert result.served and result.prompt_tokens == 812
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read_file", {"path": "b.py"})]


def test_ollamas_parse_error_is_a_malformed_turn() -> None:
    from vibey_gh.lanes.loop import is_malformed

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error": "error parsing tool call: raw='{\"path\": '"})

    client = OllamaChatClient("http://o:1", "m", transport=httpx.MockTransport(handler))
    try:
        result = client.chat(OPENAI_MESSAGES, tool_definitions(), SETTINGS)
    finally:
        client.close()
    assert not result.served and is_malformed(result)


def _ollama_model() -> str | None:
    if shutil.which("ollama") is None:
        return None
    try:
        tags = httpx.get("http://127.0.0.1:11434/api/tags", timeout=1.0).json()
    except (httpx.HTTPError, ValueError):
        return None
    models = [m.get("name") for m in tags.get("models") or [] if isinstance(m, dict)]
    return next((m for m in models if isinstance(m, str)), None)


@pytest.mark.ollama
def test_live_ollama_answers_a_lane_turn() -> None:
    model = _ollama_model()
    if model is None:
        pytest.skip("no ollama with a model answers on 127.0.0.1:11434")
    client = production_client(LocalModels(runner="ollama", model=model))
    try:
        result = client.chat(OPENAI_MESSAGES, tool_definitions(), ChatSettings(4096, 16))
    finally:
        client.close()
    assert result.status == 200 and result.error is None and result.prompt_tokens
