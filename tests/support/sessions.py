"""Session logs for the tests: the fixtures as the agents wrote them, and a Codex rollout
that records each request's cost as Codex CLI does (a `token_count` event after it)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
CODEX = next(FIXTURES.glob("rollout-*.jsonl"))
CLAUDE = FIXTURES / "5c3e9a70-1d2b-4f8e-b6a1-92d4c0e7f318.jsonl"
# What each request of the fixture's Claude Code session cost (input + cache read).
CLAUDE_RECORDED = 14_004
# The items that end one model request in a rollout: a token_count event follows each.
_ANSWER_ENDS = ("function_call", "custom_tool_call", "message")


def token_count(at: str, input_tokens: int) -> dict[str, object]:
    """A Codex CLI `token_count` event: usage of the last request and of the session so far."""
    usage = {
        "input_tokens": input_tokens,
        "cached_input_tokens": input_tokens - 200,
        "output_tokens": 40,
        "reasoning_output_tokens": 0,
        "total_tokens": input_tokens + 40,
    }
    return {
        "timestamp": at,
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {
                "total_token_usage": usage,
                "last_token_usage": usage,
                "model_context_window": 272000,
            },
            "rate_limits": None,
        },
    }


def codex_with_usage(folder: Path, first: int, step: int = 100) -> tuple[Path, list[int]]:
    """The Codex fixture with a `token_count` after each answer (its null one left out): the
    k-th request records `first + k × step` input tokens. Returns the file and those counts."""
    lines = [json.loads(line) for line in CODEX.read_text().splitlines() if line.strip()]
    out: list[dict[str, object]] = []
    recorded: list[int] = []
    for record in lines:
        payload = record["payload"]
        if payload.get("type") == "token_count":
            continue
        out.append(record)
        ends = record["type"] == "response_item" and payload.get("type") in _ANSWER_ENDS
        if ends and payload.get("role", "assistant") == "assistant":
            recorded.append(first + step * len(recorded))
            out.append(token_count(record["timestamp"], recorded[-1]))
    path = folder / CODEX.name
    path.write_text("".join(json.dumps(record) + "\n" for record in out))
    return path, recorded
