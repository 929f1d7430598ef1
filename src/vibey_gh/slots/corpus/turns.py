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
from typing import Annotated

import msgspec
from msgspec import Meta

from ...errors import BadInput
from ...files import canonical_json, utf8

CHARS_PER_TOKEN_ESTIMATE = 3
MAX_THINK_S = 365 * 86_400.0
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


class Turn(msgspec.Struct, frozen=True, omit_defaults=True):
    """One request. `id` is "<run_id>#<index>"; `index` counts the run's turns from 0.

    `think_s` is the time the run spent outside the model before this turn (its tools), in
    seconds; None where the source has no timing. `max_tokens` caps this turn's answer below
    the calibration's own cap (a recorded trace's output length); None = the calibration's cap.
    `recorded_depth` is the input tokens a session log recorded for this request and
    `stand_in` the tokens of the run's stand-in for what the log left out (its system prompt
    and tool schemas, `sources.unseen_prefix`); None where the source recorded no usage.
    All four are left out of the JSON when None (`omit_defaults`), so a corpus from a source
    without them keeps the bytes (and the sha256) it had before the fields. Each message's
    role is checked as a corpus is read (`check_messages`).
    """

    id: str
    run_id: str
    index: int
    messages: Annotated[list[dict[str, object]], Meta(min_length=1)]
    tools: list[dict[str, object]]
    depth_estimate: int
    # bounded (no run waits a year between requests) so infinity is refused too
    think_s: Annotated[float, Meta(ge=0.0, le=MAX_THINK_S)] | None = None
    max_tokens: Annotated[int, Meta(ge=1)] | None = None
    recorded_depth: Annotated[int, Meta(ge=0)] | None = None
    stand_in: Annotated[int, Meta(ge=0)] | None = None

    def fits(self, window: int, answer_cap: int) -> bool:
        return fits_with_answer(self.depth_estimate, self.max_tokens, window, answer_cap)


class PoolRun(msgspec.Struct, frozen=True):
    """One run's turns in order. `source` is "spec", "lanes", "transcript", "trace" or
    "session"."""

    run_id: str
    source: str
    turns: tuple[Turn, ...]


class RecordedRuns(msgspec.Struct, frozen=True):
    """The runs read from recorded inputs (traces, session logs), with what they say of them:
    `sources` one entry an input, `notes` for the user, `left_out` the inputs that gave no run
    (`{"run": name, "why": ...}`)."""

    runs: list[PoolRun]
    sources: list[dict[str, object]]
    notes: list[str]
    left_out: list[dict[str, str]]


class Segment(msgspec.Struct, frozen=True):
    """Consecutive turns of one run, replayed in order by one worker (its prefix stays warm).
    `stratum` is the stratum of its deepest turn, 0 being the shallowest."""

    id: str
    run_id: str
    stratum: int
    turns: Annotated[tuple[Turn, ...], Meta(min_length=1)]

    @property
    def depth_estimate(self) -> int:
        return max(turn.depth_estimate for turn in self.turns)


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


def check_messages(messages: object, where: str) -> list[dict[str, object]]:
    """`messages` must be a non-empty list of objects with a known string `role`."""
    if not isinstance(messages, list) or not messages:
        raise BadInput(f"{where}: 'messages' must be a non-empty list")
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            raise BadInput(f"{where}: message {position} is not a JSON object")
        role = message.get("role")
        if not isinstance(role, str) or role not in MESSAGE_ROLES:  # a list is unhashable
            raise BadInput(
                f"{where}: message {position} has role {role!r} "
                f"(expected one of {', '.join(sorted(MESSAGE_ROLES))})"
            )
    return messages


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
