"""What `slots show` and the reports say about latency: the table, the ideal N's latency cost
against one slot, and the largest N that met each configured latency bound."""

from __future__ import annotations

import re

import pytest

from tests.support.latency import latency_sweep
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.judge import judge_figures
from vibey_gh.slots.report.tables.latency_table import (
    LATENCY_COLUMNS,
    ideal_cost,
    largest_meeting,
    latency_json,
    latency_lines,
    latency_rows,
    latency_values,
    verdict_latency_json,
)


def test_the_ideal_ns_latency_cost_is_said_against_one_slot() -> None:
    judgement = judge_figures(sweep_figures(latency_sweep(0.6, 1.9)), Bounds())
    assert judgement.ideal > 1
    cost = ideal_cost(judgement)
    assert cost is not None and cost.startswith(f"N={judgement.ideal}: p95 TTFT ")
    assert "at one slot" in cost and "p95 ITL" in cost and "p95 turn latency" in cost


def test_the_ideal_ns_latency_cost_is_numbers_in_json_and_a_sentence_in_text() -> None:
    judgement = judge_figures(sweep_figures(latency_sweep(0.6, 1.9)), Bounds())
    cost = latency_json(judgement, Bounds())["ideal_cost"]
    assert cost["slots"] == judgement.ideal and cost["statistic"] == "p95"
    ttft = cost["figures"]["ttft"]
    assert isinstance(ttft["at_ideal_s"], float) and isinstance(ttft["at_one_slot_s"], float)
    assert ttft["at_ideal_s"] > ttft["at_one_slot_s"]  # more slots, a later first token
    assert {"itl", "turn_latency"} <= set(cost["figures"])
    sentence = ideal_cost(judgement)
    assert sentence is not None and f"{ttft['at_one_slot_s'] * 1000:.0f} ms at one slot" in sentence


def test_no_ideal_cost_where_the_ideal_is_one_slot() -> None:
    judgement = judge_figures(sweep_figures(latency_sweep(0.6, 1.9)), Bounds(ttft_p95_seconds=0.05))
    assert judgement.ideal <= 1
    assert latency_json(judgement, Bounds())["ideal_cost"] is None and ideal_cost(judgement) is None


def test_the_largest_n_meeting_each_bound_is_found_from_the_evidence() -> None:
    figures = sweep_figures(latency_sweep(0.6, 1.9))
    bounds = Bounds(ttft_p95_seconds=1.0, itl_p95_seconds=10.0)
    judgement = judge_figures(figures, bounds)
    assert largest_meeting(judgement, bounds) == {"ttft_p95_seconds": 2, "itl_p95_seconds": 3}
    assert judgement.ideal == 2 and "refused by ttft_p95_seconds" in judgement.reason
    lines = latency_lines(judgement, bounds)
    assert "under ttft_p95_seconds = 1: the largest N that met it is N=2" in lines
    shown = latency_json(judgement, bounds)
    assert shown["largest_n_meeting"] == {"ttft_p95_seconds": 2, "itl_p95_seconds": 3}
    assert shown["bounds"] == {"ttft_p95_seconds": 1.0, "itl_p95_seconds": 10.0}


def test_a_bound_not_even_one_slot_meets_says_so() -> None:
    bounds = Bounds(ttft_p95_seconds=0.05)
    judgement = judge_figures(sweep_figures(latency_sweep(0.6, 1.9)), bounds)
    assert largest_meeting(judgement, bounds) == {"ttft_p95_seconds": None}
    assert any(
        "no N measured (not even one slot)" in line for line in latency_lines(judgement, bounds)
    )


def test_the_line_under_latency_factor_says_it_is_judged_turn_by_turn() -> None:
    bounds = Bounds(latency_factor=100.0)
    judgement = judge_figures(sweep_figures(latency_sweep(0.6, 1.9)), bounds)
    line = next(line for line in latency_lines(judgement, bounds) if "latency_factor" in line)
    assert "(each turn's latency over its own at one slot, p95 over the turns)" in line


def test_every_step_has_a_row_of_the_table() -> None:
    judgement = judge_figures(sweep_figures(latency_sweep(0.6, 1.9)), Bounds())
    rows = latency_rows(judgement, 0.9)
    assert len(rows) == 4 and all(len(row) == len(LATENCY_COLUMNS) for row in rows)
    assert rows[0][1] == "1" and rows[3][1] == "3"
    assert re.fullmatch(r"2\.\d\d s \(2\.\d\d s–2\.\d\d s\)", rows[3][3]), rows[3][3]


def test_a_streamed_steps_row_holds_ttft_tpot_and_itl_as_numbers() -> None:
    judgement = judge_figures(sweep_figures(latency_sweep(0.6, 1.9)), Bounds())
    three = judgement.verdict_for(3)
    assert three is not None
    values = latency_values(three)
    assert len(values) == 15 and all(isinstance(v, float) for v in values.values())
    # every gap is 40 ms: TPOT exactly, ITL as its 2% bucket's upper edge
    assert values["tpot_p50_s"] == pytest.approx(0.04)
    assert 0.04 <= (values["itl_p99_s"] or 0) <= 0.04 * 1.02
    assert values["ttft_p50_s"] is not None and values["ttft_p50_s"] <= values["ttft_p99_s"]
    shown = verdict_latency_json(three)
    assert shown is not None and "factor_by_turn" not in shown and "itl_gaps" not in shown
    assert shown["itl_s"]["p95_s"] == values["itl_p95_s"]
