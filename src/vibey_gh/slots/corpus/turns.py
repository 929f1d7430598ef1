"""Turns, segments and strata: the pieces a pool and a corpus are made of.

A turn is one request as a lane sends it: the whole message list so far (OpenAI chat format)
and the tool definitions, asking for the next assistant message. Its depth estimate is the
number of characters of the messages and tools as compact JSON, divided by 3 and rounded up —
a conservative stand-in for tokens, used only to stratify and to keep turns inside the window;
the runner's own prompt count on replay is the measured depth. A run filled toward the window
with a runner's count (`fill`) carries that count instead, as its fill source records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from ...errors import BadInput, MalformedJson
from ...files import canonical_json, utf8
from ...interfaces import json_fields

CHARS_PER_TOKEN_ESTIMATE = 3
MESSAGE_ROLES = frozenset({"system", "user", "assistant", "tool"})


def estimate_from_chars(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN_ESTIMATE)


def json_list_chars(item_chars: list[int]) -> int:
    """Length of a compact JSON list whose items are `item_chars` long: brackets and commas."""
    return 2 + sum(item_chars) + max(len(item_chars) - 1, 0)


def depth_estimate(messages: list[dict[str, object]], tools: list[dict[str, object]]) -> int:
    """Characters of `messages` and `tools` as compact JSON, ÷ 3, rounded up."""
    return estimate_from_chars(len(canonical_json(messages)) + len(canonical_json(tools)))


def answer_room(max_tokens: int | None, answer_cap: int) -> int:
    """Tokens a turn's answer may take: its own cap (a recorded answer's length) where it is
    below the calibration's, else the calibration's."""
    return answer_cap if max_tokens is None else min(max_tokens, answer_cap)


def fits_with_answer(depth: int, max_tokens: int | None, window: int, answer_cap: int) -> bool:
    """The headroom rule: a turn is sent only if its prompt and its answer cap fit the window
    together, so the runner never has to shift, cut or refuse (docs/decision.md)."""
    return depth + answer_room(max_tokens, answer_cap) <= window


def sha256_text(text: str) -> str:
    return hashlib.sha256(utf8(text)).hexdigest()


def seeded_rank(seed: int, *parts: str) -> str:
    """A sort key that shuffles by `seed` the same way on every machine and Python version
    (sha256, never hash() or a version-dependent generator)."""
    return sha256_text("\0".join([str(seed), *parts]))


class Turn(msgspec.Struct, frozen=True):
    """One request. `id` is "<run_id>#<index>"; `index` counts the run's turns from 0.

    `think_s` is the time the run spent outside the model before this turn (its tools), in
    seconds; None where the source has no timing. `max_tokens` caps this turn's answer below
    the calibration's own cap (a recorded trace's output length); None = the calibration's cap.
    `recorded_depth` is the input tokens a session log recorded for this request and
    `stand_in` the tokens of the run's stand-in for what the log left out (its system prompt
    and tool schemas, `sources.unseen_prefix`); None where the source recorded no usage.
    All four are left out of the JSON when None, so a corpus from a source without them keeps
    the bytes (and the sha256) it had before the fields.
    """

    id: str
    run_id: str
    index: int
    messages: list[dict[str, object]]
    tools: list[dict[str, object]]
    depth_estimate: int
    think_s: float | None = None
    max_tokens: int | None = None
    recorded_depth: int | None = None
    stand_in: int | None = None

    def fits(self, window: int, answer_cap: int) -> bool:
        return fits_with_answer(self.depth_estimate, self.max_tokens, window, answer_cap)

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "id": self.id,
            "run_id": self.run_id,
            "index": self.index,
            "depth_estimate": self.depth_estimate,
            "messages": self.messages,
            "tools": self.tools,
        }
        if self.think_s is not None:
            data["think_s"] = self.think_s
        if self.max_tokens is not None:
            data["max_tokens"] = self.max_tokens
        if self.recorded_depth is not None:
            data["recorded_depth"] = self.recorded_depth
        if self.stand_in is not None:
            data["stand_in"] = self.stand_in
        return data

    @classmethod
    def from_json(cls, data: object, where: str) -> Turn:
        if not isinstance(data, dict):
            raise BadInput(f"{where}: a turn must be a JSON object")
        turn_id = _field(data, "id", str, where)
        messages = _field(data, "messages", list, where)
        tools = _field(data, "tools", list, where)
        check_messages(messages, f"{where}: turn {turn_id}")
        if not all(isinstance(tool, dict) for tool in tools):
            raise BadInput(f"{where}: turn {turn_id}: every tool must be a JSON object")
        return cls(
            id=turn_id,
            run_id=_field(data, "run_id", str, where),
            index=_field(data, "index", int, where),
            messages=messages,
            tools=tools,
            depth_estimate=_field(data, "depth_estimate", int, where),
            think_s=_think_seconds(data),
            max_tokens=_answer_cap(data),
            recorded_depth=_tokens(data, "recorded_depth"),
            stand_in=_tokens(data, "stand_in"),
        )


class PoolRun(msgspec.Struct, frozen=True):
    """One run's turns in order. `source` is "spec", "lanes", "transcript", "trace" or
    "session"."""

    run_id: str
    source: str
    turns: tuple[Turn, ...]


class Segment(msgspec.Struct, frozen=True):
    """Consecutive turns of one run, replayed in order by one worker (its prefix stays warm).
    `stratum` is the stratum of its deepest turn, 0 being the shallowest."""

    id: str
    run_id: str
    stratum: int
    turns: tuple[Turn, ...]

    @property
    def depth_estimate(self) -> int:
        return max(turn.depth_estimate for turn in self.turns)

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "run_id": self.run_id,
            "stratum": self.stratum,
            "turns": [turn.to_json() for turn in self.turns],
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> Segment:
        if not isinstance(data, dict):
            raise BadInput(f"{where}: a segment must be a JSON object")
        turns = _field(data, "turns", list, where)
        if not turns:
            raise BadInput(f"{where}: segment {data.get('id')!r} has no turns")
        return cls(
            id=_field(data, "id", str, where),
            run_id=_field(data, "run_id", str, where),
            stratum=_field(data, "stratum", int, where),
            turns=tuple(json_fields.each(data, "turns", lambda turn: Turn.from_json(turn, where))),
        )


class Stratum(msgspec.Struct, frozen=True):
    """One depth band [low, high) of the window by estimate (the deepest includes `high`).

    wanted: segments asked for; available: candidate segments the pool offered;
    segments: segments drawn (fewer than wanted is a shortfall, never filled from elsewhere).
    """

    name: str
    low: int
    high: int
    segments: int
    wanted: int
    available: int

    @property
    def shortfall(self) -> int:
        return max(self.wanted - self.segments, 0)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "low": self.low,
            "high": self.high,
            "segments": self.segments,
            "wanted": self.wanted,
            "available": self.available,
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> Stratum:
        if not isinstance(data, dict):
            raise BadInput(f"{where}: a stratum must be a JSON object")
        return cls(
            name=_field(data, "name", str, where),
            low=_field(data, "low", int, where),
            high=_field(data, "high", int, where),
            segments=_field(data, "segments", int, where),
            wanted=_field(data, "wanted", int, where),
            available=_field(data, "available", int, where),
        )


def check_messages(messages: object, where: str) -> list[dict[str, object]]:
    """`messages` must be a non-empty list of objects with a known string `role`."""
    if not isinstance(messages, list) or not messages:
        raise BadInput(f"{where}: 'messages' must be a non-empty list")
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            raise BadInput(f"{where}: message {position} is not a JSON object")
        role = message.get("role")
        if role not in MESSAGE_ROLES:
            raise BadInput(
                f"{where}: message {position} has role {role!r} "
                f"(expected one of {', '.join(sorted(MESSAGE_ROLES))})"
            )
    return messages


def _think_seconds(data: dict[str, object]) -> float | None:
    """A turn's `think_s`: absent or null when unknown, else a finite number >= 0."""
    value: float | None = json_fields.number(data, "think_s", None)
    if value is not None and not (0.0 <= value < float("inf")):
        raise MalformedJson("expected a finite number of seconds >= 0", ("think_s",))
    return value


def _answer_cap(data: dict[str, object]) -> int | None:
    """A turn's `max_tokens`: absent or null when the calibration's cap applies, else >= 1."""
    value: int | None = json_fields.integer(data, "max_tokens", None)
    if value is not None and value < 1:
        raise MalformedJson("expected a whole number of tokens >= 1", ("max_tokens",))
    return value


def _tokens(data: dict[str, object], key: str) -> int | None:
    """An optional count of tokens: absent or null, else a whole number >= 0."""
    value: int | None = json_fields.integer(data, key, None)
    if value is not None and value < 0:
        raise MalformedJson("expected a whole number of tokens >= 0", (key,))
    return value


def _field(data: dict[str, object], key: str, kind: type, where: str) -> Any:
    """A required field of the turn, segment or stratum: MalformedJson naming its JSON path,
    which the corpus reader completes (`segments[0].turns[1].id`) and turns into BadInput."""
    return json_fields.typed(data, key, kind)


def pool_sha256(runs: Sequence[PoolRun]) -> str:
    digests: dict[int, str] = {}

    def digest(item: object) -> str:
        # Turns of one run share their message objects, so each is serialized once.
        key = id(item)
        if key not in digests:
            digests[key] = sha256_text(canonical_json(item))
        return digests[key]

    total = hashlib.sha256()
    for run in runs:
        for turn in run.turns:
            line = {
                "id": turn.id,
                "run_id": turn.run_id,
                "index": turn.index,
                "depth_estimate": turn.depth_estimate,
                "messages": [digest(message) for message in turn.messages],
                "tools": digest(turn.tools),
            }
            # Fields newer than the hash are in it only where set: old pools hash as before.
            if turn.think_s is not None:
                line["think_s"] = turn.think_s
            if turn.max_tokens is not None:
                line["max_tokens"] = turn.max_tokens
            if turn.recorded_depth is not None:
                line["recorded_depth"] = turn.recorded_depth
            if turn.stand_in is not None:
                line["stand_in"] = turn.stand_in
            total.update(utf8(canonical_json(line)) + b"\n")
    return total.hexdigest()
