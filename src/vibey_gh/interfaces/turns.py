"""One turn as a runner answered it: the raw result metrics and fidelity are computed from."""

from __future__ import annotations

import math
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from .token_gaps import Gaps, ascending

# Done/finish reasons that make a turn "served" (design §5).
SERVED_REASONS = frozenset({"stop", "length", "tool_calls"})

# The failure reason every adapter uses for a prompt longer than the slot's window.
REFUSED_OVER_WINDOW = "refused: over window"


# ---------------------------------------------------------------------------------------------
# One turn as the runner timed it itself: prompt processing apart from generation.
#
# llama-server puts a `timings` object on its answer (`prompt_n` tokens read in `prompt_ms`,
# `predicted_n` written in `predicted_ms`; tokens its cache held are `cache_n`, not in
# `prompt_n`); Ollama's last chunk carries `prompt_eval_count` / `prompt_eval_duration` and
# `eval_count` / `eval_duration`, durations in nanoseconds (runners.md §4, §9). These are the
# figures llama-bench calls pp and tg. Each adapter hands its pair of numbers to `reported`,
# which keeps a pair only when both are plausible: the reply is untrusted input, so a negative,
# non-finite or absurd number is dropped (None), never divided by.
#
# A turn records `RunnerTimings()` (every field None) when the runner's answer held no timings,
# so "not reported" stays apart from "not recorded" (a turn recorded before timings were kept
# has no RunnerTimings at all).
# ---------------------------------------------------------------------------------------------

# No window holds more tokens, and no turn with a deadline runs for a day.
MAX_TOKENS = 10_000_000
MAX_SECONDS = 86_400.0
# Nor does any runner read or write ten million tokens a second: a rate above it comes from a
# duration too short to divide by (a timer's resolution), not from the runner.
MAX_TOKENS_PER_S = 1e7

_FIELDS = ("prompt_tokens", "prompt_s", "output_tokens", "output_s")


def _plausible_count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value != int(value) or not 0 <= value <= MAX_TOKENS:
        return None
    return int(value)


def _plausible_seconds(value: object, per_second: float) -> float | None:
    """`value` in units of 1/per_second, as seconds, when it is finite, ≥ 0 and under a day."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    seconds = value / per_second
    return float(seconds) if 0.0 <= seconds <= MAX_SECONDS else None


def reported(
    tokens: object, duration: object, per_second: float
) -> tuple[int | None, float | None]:
    """(tokens, seconds) of a count and its duration as a reply gave them (`per_second`: the
    duration's units in a second, 1000 for ms, 1e9 for ns); (None, None) unless both are
    plausible."""
    count = _plausible_count(tokens)
    seconds = _plausible_seconds(duration, per_second)
    return (count, seconds) if count is not None and seconds is not None else (None, None)


def _rate(tokens: int | None, seconds: float | None, least: int = 1) -> float | None:
    if tokens is None or seconds is None or tokens < least or seconds <= 0.0:
        return None
    rate = tokens / seconds
    return rate if rate <= MAX_TOKENS_PER_S else None


# What a stored timing may hold: what `reported` keeps of a reply (never more)
_Count = Annotated[int, Meta(ge=0, le=MAX_TOKENS)]
_Seconds = Annotated[float, Meta(ge=0.0, le=MAX_SECONDS)]


class RunnerTimings(msgspec.Struct, frozen=True, omit_defaults=True):
    """prompt_tokens read (not from a cache) in prompt_s seconds; output_tokens generated in
    output_s seconds; None where the runner did not say, or said something impossible.
    Written with the fields the runner reported only ({} when it reported none)."""

    prompt_tokens: _Count | None = None
    prompt_s: _Seconds | None = None
    output_tokens: _Count | None = None
    output_s: _Seconds | None = None

    @property
    def prompt_per_s(self) -> float | None:
        """Prompt processing, tokens/s (llama-bench's pp); None without tokens or time."""
        return _rate(self.prompt_tokens, self.prompt_s)

    @property
    def output_per_s(self) -> float | None:
        """Generation, tokens/s (llama-bench's tg); None without tokens or time, and for a
        reply of one token: llama.cpp samples the first token with the prompt and times the
        generation from it, so one token reads 0.001 ms, a million tokens/s."""
        return _rate(self.output_tokens, self.output_s, least=2)

    @property
    def reported_any(self) -> bool:
        return any(getattr(self, name) is not None for name in _FIELDS)


class ToolCall(msgspec.Struct, frozen=True):
    name: str
    arguments: dict[str, Any]


class TurnResult(msgspec.Struct, frozen=True, omit_defaults=True):
    """What one request gave back, as raw as possible; metrics are computed from it later.

    Written with each field at its default left out (a turn recorded before a field was kept
    reads as it did), read with every type and range checked (`interfaces.schema.checked`).

    Fields:
      status: HTTP status, or None when no response arrived (timeout, connection refused).
      finish_reason: done_reason (Ollama) / finish_reason (OpenAI), None when absent.
      prompt_tokens / output_tokens: as the runner counted them, None when not reported.
      text: the answer text ("" for a pure tool call or a failure).
      tool_calls: the tool calls, in order.
      started / ended: monotonic seconds around the request.
      cached_tokens: prompt tokens the runner took from its prompt cache (a prefix it already
        held), None when it does not say.
      error: why the turn failed (None when served), e.g. "refused: over window",
        "http 500: error parsing tool call", "no done reason", "timeout after 600s".
      streamed: the answer came as a stream and was reassembled; the three fields below are
        set only then (a turn recorded unstreamed has no token timing), and written when set.
      first_token / last_token: monotonic seconds when the first and the last chunk carrying
        answer text or a tool call arrived (None when none did).
      token_chunks: how many chunks carried answer text or a tool call.
      token_gaps: the gaps between those chunks, counted in buckets (`token_gaps`); empty for
        turns recorded before the gaps were kept.
      runner_timings: the runner's own timing of prompt processing and generation
        (`RunnerTimings` above); all None when its answer had none; None itself for turns recorded
        before they were kept.
    """

    status: int | None
    finish_reason: str | None
    prompt_tokens: int | None
    output_tokens: int | None
    text: str
    tool_calls: tuple[ToolCall, ...]
    started: float
    ended: float
    # always written (null when served): no default, so `omit_defaults` keeps it
    error: str | None
    cached_tokens: int | None = None
    streamed: bool = False
    first_token: float | None = None
    last_token: float | None = None
    token_chunks: int = 0
    token_gaps: Gaps = ()
    runner_timings: RunnerTimings | None = None

    def __post_init__(self) -> None:
        ascending(self.token_gaps)

    @property
    def served(self) -> bool:
        return self.status == 200 and self.finish_reason in SERVED_REASONS and self.error is None

    @property
    def latency_s(self) -> float:
        return self.ended - self.started
