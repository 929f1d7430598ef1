"""Codex CLI session rollouts (`~/.codex/sessions/…/rollout-<time>-<id>.jsonl`).

Each line is `{"timestamp": "<RFC 3339>", "type": <kind>, "payload": {...}}`. The kinds:
`session_meta` (the first line: `id`, `timestamp`, `cwd`, `cli_version`, …), `response_item`
(one item of the model's input or output, below), `compacted` (`message`: the summary that
replaces the history), and `turn_context` / `event_msg` (settings and UI events: no model
input). Two of those say what a request was: `turn_context`'s `model`, and the `event_msg`
of type `token_count` written after each request, whose `info.last_token_usage.input_tokens`
is every input token that request sent (its `cached_input_tokens` are a part of it) — the
instructions and tool schemas the log does not spell out included (`unseen_prefix` stands in
for them). `info` is null before the first request. A `response_item` payload is tagged by `type`:

* `message` — `role` ("user", "developer", "system" or "assistant") and `content`, a list of
  `{"type": "input_text" | "output_text", "text"}` (and `input_image`, which is left out);
  developer and system messages are sent as system messages at the start, as user messages
  after it;
* `reasoning` — the start of an answer (its content is not replayed);
* `function_call` — `name`, `arguments` (a JSON string), `call_id`;
* `custom_tool_call` — `name`, `input` (free text), `call_id`;
* `local_shell_call` — `call_id`, `action.command` (a list of words);
* `function_call_output` — `call_id`, `output`: a string, or a list of content items;
* `custom_tool_call_output` — `call_id`, `output` (a string).

Other item types (web searches, snapshots) have no chat-format equivalent: they are skipped
and counted.
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

CODEX_TYPES = frozenset({"session_meta", "response_item", "compacted", "turn_context", "event_msg"})
_INPUT_ROLES = {"user": "user", "developer": "system", "system": "system"}


def read_codex_record(record: object, builder: SessionBuilder, facts: SessionFacts) -> None:
    known = facts.known_record(record, CODEX_TYPES)
    if known is None:
        return
    record, kind, at = known
    payload = json_fields.mapping(record, "payload", json_fields.REQUIRED)
    with json_fields.within("payload"):
        if kind == "session_meta":
            # A resumed or forked session repeats earlier sessions' lines: the first one names it.
            facts.session_id = facts.session_id or json_fields.text(payload, "id", None)
            facts.version = facts.version or json_fields.text(payload, "cli_version", None)
            instructions = payload.get("instructions")
            if isinstance(instructions, str) and instructions and not builder.messages:
                builder.add_input({"role": "system", "content": instructions}, at)
        elif kind == "compacted":
            builder.restart(json_fields.text(payload, "message"), at)
        elif kind == "response_item":
            _response_item(payload, at, builder, facts)
        elif kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and safe_name(model) == model:
                facts.models[model] += 1
        elif payload.get("type") == "token_count":
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            tokens = usage_tokens(last, ("input_tokens",))
            if tokens is not None:
                builder.record_usage(tokens)


def _response_item(
    item: dict[str, Any], at: float | None, builder: SessionBuilder, facts: SessionFacts
) -> None:
    kind = json_fields.text(item, "type")
    if kind == "message":
        role = json_fields.text(item, "role")
        text = _texts(json_fields.items(item, "content"), "content")
        if role == "assistant":
            builder.add_text(text, at)
        elif role in _INPUT_ROLES:
            # Chat templates take system messages only at the start: a later developer
            # message (the agent's own instructions mid-session) is sent as the user's.
            opening = all(message["role"] == "system" for message in builder.messages)
            mapped = _INPUT_ROLES[role] if opening else "user"
            builder.add_input({"role": mapped, "content": text}, at)
        else:
            raise MalformedJson(f"unknown role {safe_name(role)!r}", ("role",))
    elif kind == "reasoning":
        builder.begin_answer(at)
    elif kind == "function_call":
        builder.add_tool_call(
            json_fields.text(item, "call_id"),
            json_fields.text(item, "name"),
            json_fields.text(item, "arguments"),
            at,
        )
    elif kind == "custom_tool_call":
        arguments = json.dumps({"input": json_fields.text(item, "input")})
        builder.add_tool_call(
            json_fields.text(item, "call_id"), json_fields.text(item, "name"), arguments, at
        )
    elif kind == "local_shell_call":
        action = json_fields.mapping(item, "action")
        command = action.get("command", [])
        call_id = json_fields.text(item, "call_id", None) or f"shell_{len(builder.messages)}"
        builder.add_tool_call(call_id, "shell", json.dumps({"command": command}), at)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        if isinstance(output, list):
            text = _texts(output, "output")
        elif isinstance(output, str):
            text = output
        else:
            raise MalformedJson(f"expected a string or a list, got {output!r:.40}", ("output",))
        message = {
            "role": "tool",
            "tool_call_id": json_fields.text(item, "call_id"),
            "content": text,
        }
        builder.add_input(message, at)
    else:
        facts.skipped[f"response_item {safe_name(kind)}"] += 1


def _texts(parts: list[Any], key: str) -> str:
    """The text of a content list (`input_text`, `output_text`); images are left out."""
    texts = []
    for position, part in enumerate(parts):
        with json_fields.within(key, position):
            if not isinstance(part, dict):
                raise MalformedJson("expected a content object")
            if json_fields.text(part, "type", "") in ("input_text", "output_text", "text"):
                texts.append(json_fields.text(part, "text"))
    return "".join(texts)
