"""A whole-run corpus too small for a run-level estimate is named, with what would fix it."""

from __future__ import annotations

from vibey_gh.slots.corpus.enough import runs_needed, too_few_runs
from vibey_gh.slots.corpus.turns import Segment, Turn


def units(runs: int) -> tuple[Segment, ...]:
    return tuple(
        Segment(f"r{i}#0-0", f"r{i}", 0, (Turn(f"r{i}#0", f"r{i}", 0, [], [], 10),))
        for i in range(runs)
    )


def test_fewer_runs_than_twice_the_widest_step_are_named_with_the_fixes() -> None:
    assert runs_needed(4) == 8
    said = too_few_runs(units(5), True, max_slots=4)
    assert said is not None
    assert "5 whole run(s)" in said and "at least 8" in said and "add 3 more runs" in said
    assert "--shape segments" in said and "--max-slots 2" in said


def test_enough_runs_or_a_corpus_of_segments_say_nothing() -> None:
    assert too_few_runs(units(8), True, max_slots=4) is None
    assert too_few_runs(units(1), False, max_slots=4) is None
