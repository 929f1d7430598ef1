"""A step's cached share of prompt tokens, its first pass beside its repeats, as the runner
counted it; none, with the reason, where no turn kept the count (Ollama reports none)."""

from __future__ import annotations

from msgspec.structs import replace

from tests.support.slot_builders import answer, make_step
from vibey_gh.interfaces.schema import as_json
from vibey_gh.slots.judging.truth.prefix_cache import NOT_REPORTED, cache_shares
from vibey_gh.slots.report.tables.prompt_cache import cache_cell


def test_the_first_pass_and_the_repeats_are_shown_apart() -> None:
    step = make_step(0, 2, [answer("a")] * 4)
    counted = [(1, 20), (1, 40), (2, 30), (2, 50)]  # pass, cached of 100 prompt tokens
    turns = tuple(
        replace(t, pass_number=p, result=replace(t.result, cached_tokens=c))
        for t, (p, c) in zip(step.turns, counted, strict=True)
    )
    shares = cache_shares(replace(step, turns=turns))
    assert (shares.share, shares.first_pass, shares.repeats) == (0.35, 0.30, 0.40)
    assert cache_cell(shares) == "35% (pass 1 30%, repeats 40%)"
    unmarked = replace(step, turns=tuple(replace(t, pass_number=0) for t in turns))
    assert cache_cell(cache_shares(unmarked)) == "35%"


def test_a_runner_that_counts_nothing_has_no_share_and_says_why() -> None:
    shares = cache_shares(make_step(0, 1, [answer("a")] * 3))
    assert shares.share is None and shares.why == NOT_REPORTED
    assert as_json(shares)["cached_share"] is None
    assert cache_cell(shares) == "not recorded"
