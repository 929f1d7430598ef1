"""Claude Code project sessions (`~/.claude/projects/<project>/<session id>.jsonl`).

Each line is an object with a `type`. The conversation is in `user` and `assistant` lines:
`sessionId`, `timestamp` (ISO 8601), `version` (the CLI's), `isSidechain` (true for a
sub-agent's messages kept in the same file) and `message`, in the Anthropic Messages shape:

* user: `content` is a string, or a list of `{"type": "text", "text"}`,
  `{"type": "tool_result", "tool_use_id", "content": <string or list of text blocks>}` and
  `{"type": "image", ...}` (left out);
* assistant: `content` is a list of `{"type": "text", "text"}`,
  `{"type": "tool_use", "id", "name", "input": {...}}` and `{"type": "thinking", ...}` (not
  replayed). One answer may be written as several lines, one per content block.

An assistant message also carries `model` and `usage`: what the request cost, where
`input_tokens` (the part not cached) plus `cache_read_input_tokens` and
`cache_creation_input_tokens` is every input token the request sent — the system prompt and
tool schemas the log does not spell out included (`unseen_prefix` stands in for them).

`summary`, `system`, `file-history-snapshot` and the like carry no model input and are passed
over. Sidechain lines (a sub-agent's own conversation) are kept apart and counted: the
session's run is the main conversation, and a file holding only sidechain lines (a sub-agent's
own log) is that sub-agent's run.
"""

from __future__ import annotations

import json
from typing import Any

from ....errors import MalformedJson
from ....interfaces import json_fields
from .session_builder import (
    SessionBuilder,
    SessionFacts,
    safe_name,
    usage_tokens,
)

_CONVERSATION = frozenset({"user", "assistant"})
_INPUT_TOKENS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_PASSED_OVER = frozenset(
    {"summary", "system", "file-history-snapshot", "queue-operation", "attachment", "progress"}
)
CLAUDE_TYPES = _CONVERSATION | _PASSED_OVER


def read_claude_record(record: object, builder: SessionBuilder, facts: SessionFacts) -> None:
    known = facts.known_record(record, CLAUDE_TYPES)
    if known is None:
        return
    record, kind, at = known
    if kind not in _CONVERSATION:
        return
    facts.session_id = facts.session_id or json_fields.text(record, "sessionId", None)
    facts.version = facts.version or json_fields.text(record, "version", None)
    if json_fields.boolean(record, "isSidechain", False):
        facts.skipped["sidechain lines"] += 1
        builder = facts.side_builder()
    message = json_fields.mapping(record, "message", json_fields.REQUIRED)
    with json_fields.within("message"):
        content = message.get("content")
        if kind == "user":
            _user(content, at, builder)
        else:
            _assistant(content, at, builder)
            _usage(message, builder, facts)


def _usage(message: dict[str, Any], builder: SessionBuilder, facts: SessionFacts) -> None:
    """The request's model and recorded input tokens (each line of one answer repeats them)."""
    model = message.get("model")
    # Claude Code writes "<synthetic>" for messages it made up itself: no request was sent.
    named = isinstance(model, str) and safe_name(model) == model
    if named and message.get("id") != facts.last_message_id:
        facts.models[str(model)] += 1
    facts.last_message_id = message.get("id")
    tokens = usage_tokens(message.get("usage"), _INPUT_TOKENS)
    if tokens is not None:
        builder.record_usage(tokens)


def _user(content: object, at: float | None, builder: SessionBuilder) -> None:
    if isinstance(content, str):
        builder.add_input({"role": "user", "content": content}, at)
        return
    texts: list[str] = []
    for position, block in enumerate(_blocks(content)):
        with json_fields.within("content", position):
            kind = json_fields.text(block, "type")
            if kind == "text":
                texts.append(json_fields.text(block, "text"))
            elif kind == "tool_result":
                result = {
                    "role": "tool",
                    "tool_call_id": json_fields.text(block, "tool_use_id"),
                    "content": _result_text(block.get("content")),
                }
                builder.add_input(result, at)
    if texts:
        builder.add_input({"role": "user", "content": "".join(texts)}, at)


def _assistant(content: object, at: float | None, builder: SessionBuilder) -> None:
    if isinstance(content, str):
        builder.add_text(content, at)
        return
    builder.begin_answer(at)
    for position, block in enumerate(_blocks(content)):
        with json_fields.within("content", position):
            kind = json_fields.text(block, "type")
            if kind == "text":
                builder.add_text(json_fields.text(block, "text"), at)
            elif kind == "tool_use":
                arguments = json.dumps(json_fields.mapping(block, "input"), sort_keys=True)
                builder.add_tool_call(
                    json_fields.text(block, "id"), json_fields.text(block, "name"), arguments, at
                )


def _blocks(content: object) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        raise MalformedJson(f"expected a string or a list, got {content!r:.40}", ("content",))
    for position, block in enumerate(content):
        if not isinstance(block, dict):
            raise MalformedJson("expected a content block object", ("content", position))
    return content


def _result_text(content: object) -> str:
    """A tool result's text: a string, or the text blocks of a list (images left out)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    with json_fields.within("content"):
        texts = []
        for position, block in enumerate(_blocks(content)):
            if block.get("type") == "text":
                with json_fields.within(position):
                    texts.append(json_fields.text(block, "text"))
        return "".join(texts)
