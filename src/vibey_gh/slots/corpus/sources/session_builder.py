"""The pieces every session-log reader shares: the conversation builder, what a session
told about itself, timestamps, and names safe to print (never the text of the session)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ....errors import MalformedJson
from ....files import canonical_json
from ..turns import CHARS_PER_TOKEN_ESTIMATE, Turn, estimate_from_chars, json_list_chars
from .think_time import dated_untrue, untrue

_SAFE_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,48}")


@dataclass
class SessionBuilder:
    """The conversation of one session as its records arrive, and the turns taken from it."""

    run_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    answering: bool = False
    last_input_at: float | None = None
    last_output_at: float | None = None
    untrue_gaps: int = 0  # think times that cannot be true, taken for unknown
    # turn index → the input tokens the log recorded for that request (system prompt, tools
    # and conversation: what the agent really sent)
    recorded: dict[int, int] = field(default_factory=dict)
    # the characters the turns so far give a corpus of whole runs, the stand-in for what the
    # log leaves out included: an estimate kept as the log is read, before anything is built
    output_chars: int = 0
    _chars: list[int] = field(default_factory=list)

    def record_usage(self, input_tokens: int) -> None:
        """What the log says the latest request cost; nothing before the first turn."""
        if self.turns and input_tokens > 0:
            index = len(self.turns) - 1
            seen = self.turns[index].depth_estimate * CHARS_PER_TOKEN_ESTIMATE
            before = max(seen, self.recorded.get(index, 0) * CHARS_PER_TOKEN_ESTIMATE)
            self.recorded[index] = input_tokens
            after = max(seen, input_tokens * CHARS_PER_TOKEN_ESTIMATE)
            self.output_chars += after - before

    def add_input(self, message: dict[str, Any], at: float | None) -> None:
        """A message the model reads next (system, user or tool result)."""
        self.answering = False
        self.messages.append(message)
        if at is not None:
            self.last_input_at = at

    def begin_answer(self, at: float | None) -> None:
        """The model starts answering: the conversation so far is one turn."""
        if not self.answering and any(m["role"] != "system" for m in self.messages):
            self._take_turn()
        self.answering = True
        if at is not None:
            self.last_output_at = at

    def add_text(self, text: str, at: float | None) -> None:
        if text:
            self._answer(at)["content"] += text

    def add_tool_call(self, call_id: str, name: str, arguments: str, at: float | None) -> None:
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        self._answer(at).setdefault("tool_calls", []).append(call)

    def restart(self, summary: str, at: float | None) -> None:
        """The agent compacted its history: the conversation goes on from the summary."""
        system = [m for m in self.messages[:1] if m["role"] == "system"]
        self.messages = [*system]
        self._chars = []
        self.add_input({"role": "user", "content": summary}, at)

    def _answer(self, at: float | None) -> dict[str, Any]:
        self.begin_answer(at)
        last = self.messages[-1] if self.messages else None
        if last is None or last["role"] != "assistant":
            last = {"role": "assistant", "content": ""}
            self.messages.append(last)
        return last

    def _take_turn(self) -> None:
        # Every message before this point is complete: count each one's characters once.
        for message in self.messages[len(self._chars) :]:
            self._chars.append(len(canonical_json(message)))
        think = None
        if self.turns and self.last_input_at is not None and self.last_output_at is not None:
            think = round(self.last_input_at - self.last_output_at, 3)
            if untrue(think) or dated_untrue(self.last_input_at, self.last_output_at):
                self.untrue_gaps += 1
                think = None
        index = len(self.turns)
        chars = json_list_chars(self._chars) + 2
        self.output_chars += chars
        self.turns.append(
            Turn(
                id=f"{self.run_id}#{index}",
                run_id=self.run_id,
                index=index,
                messages=list(self.messages),
                tools=[],
                depth_estimate=estimate_from_chars(chars),
                think_s=think,
            )
        )


@dataclass
class SessionFacts:
    """What a format reader learned besides the conversation (no text of it)."""

    agent: str
    session_id: str | None = None
    started: str | None = None
    ended: str | None = None
    version: str | None = None
    records: int = 0
    unknown: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    # the models the requests were sent to, as the log names them, and how many times
    models: Counter[str] = field(default_factory=Counter)
    last_message_id: object = None
    # a sub-agent's side conversation, kept apart: the run only when the file holds no other
    side: SessionBuilder | None = None

    def side_builder(self) -> SessionBuilder:
        if self.side is None:
            self.side = SessionBuilder(run_id="side")
        return self.side

    def seen(self, at_text: str | None) -> None:
        if at_text is not None:
            self.started = self.started or at_text
            self.ended = at_text

    def known_record(
        self, record: object, types: frozenset[str]
    ) -> tuple[dict[str, Any], str, float | None] | None:
        """(the record, its type, its time) when it is an object of one of the format's
        `types`, its time taken as seen; None, counted as unknown, otherwise."""
        if not isinstance(record, dict):
            self.unknown["other"] += 1
            return None
        kind = record.get("type")
        if kind not in types:
            self.unknown[safe_name(kind)] += 1
            return None
        at, at_text = timestamp_seconds(record)
        self.seen(at_text)
        return record, kind, at


def timestamp_seconds(
    record: dict[str, Any], key: str = "timestamp"
) -> tuple[float | None, str | None]:
    """(seconds since the epoch, the date-time text) of an ISO 8601 timestamp; both None
    when the record has none. A timestamp that does not parse is bad input."""
    value = record.get(key)
    if value is None:
        return None, None
    if not isinstance(value, str):
        raise MalformedJson(f"expected an ISO 8601 date-time, got {value!r:.40}", (key,))
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise MalformedJson(f"expected an ISO 8601 date-time, got {value!r:.40}", (key,)) from None
    if moment.tzinfo is None:
        raise MalformedJson("the date-time has no time zone", (key,))
    return moment.timestamp(), moment.isoformat()


def usage_tokens(usage: object, keys: tuple[str, ...]) -> int | None:
    """The sum of the whole-number fields `keys` of a usage record (a missing one counts 0);
    None when the record is not an object or holds none of them."""
    if not isinstance(usage, dict):
        return None
    values = [usage.get(key) for key in keys]
    counts = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
    return sum(counts) if counts else None


def safe_name(value: object) -> str:
    """A record type fit to print: its name if it looks like one, else "other"."""
    return value if isinstance(value, str) and _SAFE_NAME.fullmatch(value) else "other"
