"""One turn as the runner timed it itself: prompt processing apart from generation.

llama-server puts a `timings` object on its answer (`prompt_n` tokens read in `prompt_ms`,
`predicted_n` written in `predicted_ms`; tokens its cache held are `cache_n`, not in
`prompt_n`); Ollama's last chunk carries `prompt_eval_count` / `prompt_eval_duration` and
`eval_count` / `eval_duration`, durations in nanoseconds (runners.md §4, §9). These are the
figures llama-bench calls pp and tg. Each adapter hands its pair of numbers to `reported`,
which keeps a pair only when both are plausible: the reply is untrusted input, so a negative,
non-finite or absurd number is dropped (None), never divided by.

A turn records `RunnerTimings()` (every field None) when the runner's answer held no timings,
so "not reported" stays apart from "not recorded" (a turn recorded before timings were kept
has no RunnerTimings at all).
"""

from __future__ import annotations

import math
from typing import Any

from .values import frozen_value

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


def _rate(tokens: int | None, seconds: float | None) -> float | None:
    if tokens is None or seconds is None or tokens < 1 or seconds <= 0.0:
        return None
    rate = tokens / seconds
    return rate if rate <= MAX_TOKENS_PER_S else None


@frozen_value
class RunnerTimings:
    """prompt_tokens read (not from a cache) in prompt_s seconds; output_tokens generated in
    output_s seconds; None where the runner did not say, or said something impossible."""

    prompt_tokens: int | None = None
    prompt_s: float | None = None
    output_tokens: int | None = None
    output_s: float | None = None

    @property
    def prompt_per_s(self) -> float | None:
        """Prompt processing, tokens/s (llama-bench's pp); None without tokens or time."""
        return _rate(self.prompt_tokens, self.prompt_s)

    @property
    def output_per_s(self) -> float | None:
        """Generation, tokens/s (llama-bench's tg); None without tokens or time."""
        return _rate(self.output_tokens, self.output_s)

    @property
    def reported_any(self) -> bool:
        return any(getattr(self, name) is not None for name in _FIELDS)

    def to_json(self) -> dict[str, Any]:
        """The fields the runner reported ({} when it reported none)."""
        return {name: value for name in _FIELDS if (value := getattr(self, name)) is not None}

    @classmethod
    def from_json(cls, data: object) -> RunnerTimings:
        """As stored; ValueError naming the field when one is not a plausible number."""
        if not isinstance(data, dict):
            raise ValueError("expected an object of runner timings")
        values: dict[str, Any] = {}
        for name in _FIELDS:
            value = data.get(name)
            if value is None:
                continue
            checked = (
                _plausible_count(value) if name.endswith("tokens") else _plausible_seconds(value, 1)
            )
            if checked is None:
                raise ValueError(f"{name}: expected a plausible number ≥ 0, got {value!r:.40}")
            values[name] = checked
        return cls(**values)
