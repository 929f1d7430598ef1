"""Streamed turns for the latency rules: turn results and steps given a TTFT and an ITL."""

from __future__ import annotations

from msgspec.structs import replace

from tests.support.slot_builders import make_step, same_answers
from vibey_gh.interfaces.token_gaps import bucket_of
from vibey_gh.interfaces.turns import TurnResult
from vibey_gh.slots.judging.records import StepRecord


def streamed(result: TurnResult, ttft: float, itl: float) -> TurnResult:
    """`result` as a stream would have given it: first chunk after `ttft`, one every `itl`
    after it (so each gap is `itl`, and so is the turn's mean, its TPOT)."""
    tokens = result.output_tokens or 1
    first = result.started + ttft
    return replace(
        result,
        streamed=True,
        first_token=first,
        last_token=first + itl * (tokens - 1),
        token_chunks=tokens,
        token_gaps=((bucket_of(itl), tokens - 1),) if tokens > 1 else (),
    )


def timed(step: StepRecord, ttft: float, itl: float, spread: float = 0.0) -> StepRecord:
    """Every turn of `step` streamed with this TTFT (growing by `spread` a turn) and ITL."""
    turns = tuple(
        replace(t, result=streamed(t.result, ttft + spread * i, itl))
        for i, t in enumerate(step.turns)
    )
    return replace(step, turns=turns)


def latency_sweep(ttft_at_two: float, ttft_at_three: float) -> list[StepRecord]:
    """Steps 1, 1, 2, 3: the one-slot runs at 0.2 s TTFT, then the given ones; each step
    serves more turns in the same time (a gain at every N)."""
    one = timed(make_step(0, 1, same_answers(100), steady=True), 0.2, 0.02, spread=0.001)
    again = timed(make_step(1, 1, same_answers(100), steady=True), 0.2, 0.02, spread=0.001)
    two = timed(make_step(2, 2, same_answers(200), steady=True), ttft_at_two, 0.03, 0.001)
    three = timed(make_step(3, 3, same_answers(300), steady=True), ttft_at_three, 0.04, 0.001)
    return [one, again, two, three]
