"""The step table from its columns: full cells, brief terminal cells, numbers; the ideal N."""

from __future__ import annotations

from tests.slots.judging.test_steady_state import closed_loop
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.report.tables.step_table import (
    COLUMNS,
    STEP_COLUMNS,
    step_rows,
    step_values,
    step_views,
)


def gained_sweep():  # type: ignore[no-untyped-def]
    steps = [closed_loop(1, [1.0] * 60, index=i) for i in range(2)]
    # turns that vary by ±10% from pass to pass: an interval of some width
    steps.append(closed_loop(2, [1.0, 1.1, 0.9, 1.05, 0.95, 1.02, 0.98] * 9, index=2))
    return steps, judge_sweep(steps, Bounds(min_gain=0.10, confidence=0.9))


def test_the_ideal_step_is_marked_once() -> None:
    steps, judged = gained_sweep()
    assert judged.ideal == 2
    views = step_views(steps, judged)
    assert [view.ideal for view in views] == [False, False, True]
    verdict = next(c for c in STEP_COLUMNS if c.header == "verdict")
    assert verdict.brief(views[2]).endswith("◀ ideal")
    assert "◀" not in verdict.full(views[2]), "the report's table marks it in words elsewhere"


def test_values_are_numbers_and_every_column_gives_them() -> None:
    steps, judged = gained_sweep()
    (one, again, two) = step_values(steps, judged)
    assert two["slots"] == 2 and two["ideal"] is True and two["verdict"] == "qualifies"
    assert isinstance(two["turns_per_hour"], float)
    assert two["turns_per_hour_low"] < two["turns_per_hour"] < two["turns_per_hour_high"]
    assert two["gain_low"] >= 0.10
    assert isinstance(two["served_turns"], int) and two["corpus_turns"] >= 1
    assert one["structural_agreement"] is None, "the first run is what others agree with"
    rows = step_rows(steps, judged)
    assert len(rows[0]) == len(COLUMNS) == len(STEP_COLUMNS)


def test_brief_throughput_is_the_point_and_its_spread() -> None:
    steps, judged = gained_sweep()
    turns = next(c for c in STEP_COLUMNS if c.header == "turns/h")
    brief = turns.brief(step_views(steps, judged)[2])
    assert brief.startswith("7.2k ±") and brief.endswith("%")
