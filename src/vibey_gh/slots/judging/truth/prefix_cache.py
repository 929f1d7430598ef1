"""How much of a step's prompts the runner took from its prompt cache.

Workers keep a run's prefix warm, and a recorded trace or session shares prefixes as the agent
did; a runner that reports its cached prompt tokens (llama-server does) shows whether that
sharing was replayed. The share is cached over prompt tokens of every served turn that reports
both; None when no turn does.
"""

from __future__ import annotations

from ..records import StepRecord


def cached_prompt_share(step: StepRecord) -> float | None:
    cached = prompt = 0
    for turn in step.turns:
        result = turn.result
        if result.served and result.cached_tokens is not None and result.prompt_tokens:
            cached += result.cached_tokens
            prompt += result.prompt_tokens
    return cached / prompt if prompt else None
