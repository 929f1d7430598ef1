"""How much of a step's prompts the runner took from its prompt cache.

Workers keep a run's prefix warm, and a recorded trace or session shares prefixes as the agent
did; a runner that reports its cached prompt tokens (llama-server does) shows whether that
sharing was replayed. The share is cached over prompt tokens of every served turn that reports
both; None when no turn does (Ollama reports none).

Each pass over the corpus is marked (`stepping.passes`), so a repeated pass reuses what a run
shares within itself, not what the earlier pass left: the share of the first pass and of the
repeats should be alike, at every N. Both are kept apart (`CacheShares`) so a reader sees it.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from msgspec import field

from ..records import StepRecord, TurnRecord

# why a step has no share: no turn kept the runner's count of cached prompt tokens
NOT_REPORTED = (
    "no turn recorded the runner's count of prompt tokens taken from its cache (Ollama "
    "reports none; evidence recorded before the count was kept has none)"
)


def _share(turns: Iterable[TurnRecord]) -> float | None:
    cached = prompt = 0
    for turn in turns:
        result = turn.result
        if result.served and result.cached_tokens is not None and result.prompt_tokens:
            cached += result.cached_tokens
            prompt += result.prompt_tokens
    return cached / prompt if prompt else None


def cached_prompt_share(step: StepRecord) -> float | None:
    return _share(step.turns)


class CacheShares(msgspec.Struct, frozen=True):
    """A step's cached share of prompt tokens: in all, in its first pass over the corpus and
    in the passes after it (None where no turn reports it, or there was no such pass; passes
    are told apart only in evidence that marks them). why: the reason `share` is None."""

    # written under the names the step table's JSON gives them
    share: float | None = field(name="cached_share")
    first_pass: float | None = field(name="cached_share_first_pass")
    repeats: float | None = field(name="cached_share_repeats")
    why: str | None = field(name="cached_share_why")


def cache_shares(step: StepRecord) -> CacheShares:
    share = _share(step.turns)
    if share is None:
        served = any(t.result.served for t in step.turns)
        return CacheShares(None, None, None, NOT_REPORTED if served else "no turn was served")
    marked = [t for t in step.turns if t.pass_number > 0]
    first = _share(t for t in marked if t.pass_number == 1)
    repeats = _share(t for t in marked if t.pass_number > 1)
    return CacheShares(share, first, repeats, None)
