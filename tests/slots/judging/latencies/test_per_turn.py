"""latency_factor on per-turn ratios: each turn against itself at one slot, noise pulled out
before the p95 over turns, and figures stored before judged on their ratio of two p95s."""

from __future__ import annotations

import json
import math
import random

import pytest
from msgspec.structs import replace

from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.slots.judging.bounds import Bounds
from vibey_gh.slots.judging.latencies.by_turn import paired_p95_ratio
from vibey_gh.slots.judging.latencies.latency import latency_figures
from vibey_gh.slots.judging.latencies.latency_bounds import latency_findings
from vibey_gh.slots.judging.latencies.latency_figures import LatencyFigures
from vibey_gh.slots.judging.latencies.per_turn import per_turn_ratio, shrunk_p95, turn_ratios


def passes(
    repeats: int, seed: int, scale: float = 1.0, noise: float = 0.1, turns: int = 16
) -> dict[str, list[float]]:
    """`turns` turns of very different lengths (0.2 s … 4 s), each sent `repeats` times with
    log-normal noise of `noise`."""
    rng = random.Random(seed)
    return {
        f"t{i}": [
            scale * (0.2 + 3.8 * i / (turns - 1)) * math.exp(rng.gauss(0.0, noise))
            for _ in range(repeats)
        ]
        for i in range(turns)
    }


def test_the_same_turns_slower_by_a_factor_give_that_factor_and_are_judged_on_it() -> None:
    base, here = passes(4, seed=1, noise=0.05), passes(8, seed=2, scale=1.4, noise=0.05)
    per_turn = per_turn_ratio(here, base)
    assert per_turn is not None and per_turn.turns == 16
    assert per_turn.point == pytest.approx(1.4, rel=0.06)
    low, high = per_turn.interval(0.9)
    assert low is not None and high is not None and low <= 1.4 * 1.03 and high < 1.5
    figures = replace(latency_figures([], None), factor_per_turn=per_turn)
    assert latency_findings(figures, None, Bounds(latency_factor=1.5)) == []
    broken = latency_findings(figures, None, Bounds(latency_factor=1.25))
    assert broken and "its own at one slot at p95 over 16 turns" in broken[0]
    assert per_turn_ratio(here, base) == per_turn, "a fixed draw: the same evidence, the same"


def test_noise_pulled_out_keeps_the_p95_from_rising_with_it() -> None:
    """With 3 repeats a side and 10% noise, the raw ratios' p95 (the 16th of 16) sits well
    above the true 1.4; the pulled ratios' keeps less than half of that excess."""
    raws, pulled = [], []
    for seed in range(8):
        turns = turn_ratios(passes(3, seed, scale=1.4), passes(3, seed + 50))
        raws.append(shrunk_p95([(x, None) for x, _ in turns], [1] * len(turns)))
        pulled.append(shrunk_p95(turns, [1] * len(turns)))
    raw, kept = sum(raws) / len(raws), sum(pulled) / len(pulled)
    assert raw > 1.4 * 1.1
    assert abs(kept - 1.4) < (raw - 1.4) / 2


def test_a_turn_truly_slower_than_the_rest_is_not_pulled_away() -> None:
    """One turn twice as slow again, far beyond its noise: the p95 over 16 turns is that
    turn's, and a limit below it is refused, not met on the others' slowdown (the interval
    reaches down to theirs: a draw of 16 turns leaves that one out a third of the time)."""
    base, here = passes(4, seed=3), passes(8, seed=4, scale=1.3)
    here["t15"] = [2.0 * v for v in here["t15"]]
    per_turn = per_turn_ratio(here, base)
    assert per_turn is not None and per_turn.point > 2.3
    figures = replace(latency_figures([], None), factor_per_turn=per_turn)
    assert latency_findings(figures, None, Bounds(latency_factor=1.5))


def test_without_repeats_nothing_is_pulled_and_one_side_turns_are_left_out() -> None:
    base = {"a": [1.0], "b": [2.0], "z": [1.0]}
    here = {"a": [1.5], "b": [2.0], "c": [9.0]}
    per_turn = per_turn_ratio(here, base)
    assert per_turn is not None and per_turn.turns == 2
    assert per_turn.point == pytest.approx(1.5), "the raw ratios' p95: it errs high"
    assert per_turn.interval(0.9) == (None, None), "two turns cannot show a spread"
    assert per_turn_ratio({"c": [1.0]}, base) is None


def test_stored_figures_keep_their_measure_and_say_which_they_are_judged_on() -> None:
    base, here = passes(4, seed=5), passes(8, seed=6, scale=1.4)
    figures = replace(latency_figures([], None), factor_per_turn=per_turn_ratio(here, base))
    stored = checked(json.loads(json.dumps(as_json(figures))), LatencyFigures)
    assert stored == figures
    old = as_json(figures)
    old.pop("factor_per_turn")
    old["factor_by_turn"] = as_json(paired_p95_ratio(here, base))  # type: ignore[union-attr]
    before = checked(json.loads(json.dumps(old)), LatencyFigures)
    assert before.factor_per_turn is None and before.factor_by_turn is not None
    broken = latency_findings(before, None, Bounds(latency_factor=1.2))
    assert broken and "a ratio of two p95s, as figures stored before" in broken[0]
