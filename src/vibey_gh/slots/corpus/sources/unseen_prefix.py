"""A stand-in for what a session log leaves out: the agent's system prompt and tool schemas.

A coding agent sends 10–20k tokens of system prompt and tool definitions before the first
word of the conversation, and its log keeps the conversation only. Where the log records what
each request cost (Claude Code's `message.usage`, Codex CLI's `token_count` events), the
difference is what the log left out; replaying the conversation alone would measure prefill, KV
cache and the window on a prompt a fraction of the real one.

Each run gets one stand-in of the recorded size: the difference, at the run's deepest
recorded request, between what the log says it cost and what the replayed conversation
counts — by the runner's own count when a counter is given (`slots corpus --count-with
runner`), else by the estimate. The stand-in is the same text in every turn of the run, at the
start of the first system message (or as one, where the conversation has none), so a runner's
prompt cache reuses it as the agent's provider did. Its text is `block_text`'s two-letter
words: three characters a token, the estimate's own rate and about one token a word to a
byte-pair tokenizer, so the estimate and real tokenizers count close to the target; with a
counter the size is corrected until the runner counts the deepest request at its recorded
depth (a few tries; the tokenizer's merges at the boundary move it by a token or two).

Each turn then records `recorded_depth` (what the log said that request cost) and `stand_in`
(the stand-in's tokens), and its depth estimate includes the stand-in. A log without usage is
replayed as it is, and its source says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from ....files import canonical_json
from ....interfaces.prompt_count import PromptCounter
from ..turns import Turn, depth_estimate, estimate_from_chars
from .block_text import block_text

STAND_IN_SCOPE = "unseen prefix"
SEPARATOR = "\n\n"
# Tries at sizing the stand-in (each one count of the deepest request).
_SIZING_TRIES = 3


def with_unseen_prefix(
    run_id: str,
    turns: Sequence[Turn],
    recorded: Mapping[int, int],
    counter: PromptCounter | None = None,
) -> tuple[list[Turn], dict[str, object]]:
    """`turns` with the run's stand-in, and what was done (for the session's source).
    `recorded`: turn index → the input tokens the log recorded for that request."""
    usable = {index: tokens for index, tokens in recorded.items() if 0 <= index < len(turns)}
    if not usable:
        return list(turns), {"usage": False}
    reference = max(usable, key=lambda index: (usable[index], index))
    deepest = turns[reference]
    goal = usable[reference]

    def reached(tokens: int) -> int:
        """The deepest recorded request's depth with a stand-in of `tokens`."""
        messages = _prefixed(deepest.messages, _text(run_id, tokens), {})
        if counter is not None:
            return counter.count(messages, deepest.tools)
        return depth_estimate(messages, deepest.tools)

    # The conversation's own depth first, then the stand-in corrected by what it misses (its
    # message's framing, and a tokenizer's merges at its edges).
    tokens = max(0, goal - _depth(deepest, counter))
    for _ in range(_SIZING_TRIES if tokens else 0):
        miss = goal - reached(tokens)
        if miss == 0 or tokens + miss < 1:
            break
        tokens += miss
    text = _text(run_id, tokens)
    cache: dict[int, dict[str, Any]] = {}
    growth: dict[int, int] = {}
    built = []
    for turn in turns:
        messages = _prefixed(turn.messages, text, cache) if text else list(turn.messages)
        # turns share their first message: its growth is measured once
        key = id(messages[0]) if messages else 0
        if key not in growth:
            growth[key] = _added_chars(turn.messages, messages)
        added = growth[key]
        built.append(
            replace(
                turn,
                messages=messages,
                depth_estimate=turn.depth_estimate + estimate_from_chars(added),
                recorded_depth=usable.get(turn.index),
                stand_in=tokens,
            )
        )
    facts: dict[str, object] = {
        "usage": True,
        "recorded_turns": len(usable),
        "stand_in_tokens": tokens,
        "deepest_recorded": usable[reference],
        "stand_in_sized_by": counter.counted_by if counter else "estimate (characters ÷ 3)",
    }
    if counter is not None:
        facts["deepest_counted"] = counter.count(built[reference].messages, deepest.tools)
    return built, facts


def _depth(turn: Turn, counter: PromptCounter | None) -> int:
    return counter.count(turn.messages, turn.tools) if counter else turn.depth_estimate


def _text(run_id: str, tokens: int) -> str:
    # block_text is three characters a token: the same words, one per token, in every turn
    return block_text(STAND_IN_SCOPE, run_id, tokens).lstrip() if tokens > 0 else ""


def _prefixed(
    messages: list[dict[str, Any]], text: str, cache: dict[int, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The messages with the stand-in at the start of the first system message (one object
    for every turn that shares that message, so turns keep sharing their prefix)."""
    if messages and messages[0].get("role") == "system":
        first = messages[0]
        merged = cache.get(id(first))
        if merged is None:
            content = first.get("content")
            joined = text + SEPARATOR + content if isinstance(content, str) and content else text
            merged = cache.setdefault(id(first), {**first, "content": joined})
        return [merged, *messages[1:]]
    inserted = cache.setdefault(0, {"role": "system", "content": text})
    return [inserted, *messages]


def _added_chars(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
    """Characters the stand-in adds to the request's JSON: its first message's growth, or
    the inserted message and its comma."""
    if len(after) == len(before) + 1:
        return len(canonical_json(after[0])) + 1
    if not before:
        return 0
    return len(canonical_json(after[0])) - len(canonical_json(before[0]))
