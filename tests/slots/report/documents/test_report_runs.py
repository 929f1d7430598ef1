"""What people read of a sweep of whole runs: which figure decided, runs per hour with its
interval, run latency, the think time, and what is no longer on the not-measured list."""

from __future__ import annotations

from tests.support.rendering import report_of, summary_of
from tests.support.slot_builders import runs_loop
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json
from vibey_gh.slots.evidence.store import Evidence, evidence_from_json
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.report.documents.context_sections import NO_TOOL_TIME, NO_WHOLE_RUNS
from vibey_gh.slots.report.tables.step_table import RUN_COLUMNS, columns_for, step_rows


def runs_sweep() -> list:
    steps = [runs_loop(1, 60, think_s=1.0, index=i) for i in (0, 1)]
    return [*steps, runs_loop(2, 60, think_s=1.0, index=2), runs_loop(3, 60, index=3)]


def evidence_of(steps: list, think: dict[str, object]) -> Evidence:
    data = {
        "schema_version": 1,
        "kind": "vibey-gh-evidence",
        "fingerprint": {"id": "0123456789abcdef", "fields": {"window": 4096}},
        "created_at": 1_800_000_000.0,
        "corpus": {"sha256": "c" * 64, "turns": 14, "segments": 7, "shape": "runs"},
        "method": {"think": think},
        "steps": [as_json(s) for s in steps],
    }
    return evidence_from_json(data, None)


def test_the_step_table_shows_runs_per_hour_with_turns_beside_and_run_latency() -> None:
    steps = runs_sweep()
    judgement = judge_sweep(steps, Bounds())
    assert columns_for(judgement) == RUN_COLUMNS and "runs/h (turns/h)" in RUN_COLUMNS
    rows = step_rows(steps, judgement)
    two = rows[2]
    verdict = judgement.verdicts[2]
    assert two[3].startswith(f"{verdict.metrics.runs_per_hour:,.0f} (")
    assert two[3].endswith(f"; {verdict.metrics.turns_per_hour:,.0f} turns/h")
    # turn latency 1 s; a run of two turns with 1 s of tools between them: 3 s
    assert two[5] == "1.0 / 3.0"


def test_the_report_says_what_decided_and_what_the_replay_now_measures() -> None:
    evidence = evidence_of(runs_sweep(), {"think_time": "recorded", "think_cap_s": 60.0})
    report = report_of(evidence, Bounds(), {})
    assert "each turn's recorded think time, cut to 60 s; decided on runs/h" in report
    assert "| runs/h (turns/h) |" in report
    assert " runs/h (" in report and "turns/h)" in report
    assert NO_TOOL_TIME not in report and NO_WHOLE_RUNS not in report
    summary = summary_of(evidence, Bounds())
    assert "Decided on runs/h." in summary and "in 7 whole runs" in summary


def test_whole_runs_without_think_time_still_list_tool_time_as_not_measured() -> None:
    evidence = evidence_of(runs_sweep(), {"think_time": "none", "think_cap_s": 60.0})
    report = report_of(evidence, Bounds(), {})
    assert NO_TOOL_TIME in report and NO_WHOLE_RUNS not in report
    assert "none: turns back to back" in report


def test_the_terminal_table_names_runs_per_hour_in_its_header() -> None:
    from rich.console import Console

    from vibey_gh.slots.report.tables.step_table import STEP_COLUMNS, step_views
    from vibey_gh.slots.report.terminal.step_table_view import build_table

    for steps, figure in (
        (runs_sweep(), "runs/h"),
        ([runs_loop(1, 60, shape="segments")], "turns/h"),
    ):
        views = step_views(steps, judge_sweep(steps, Bounds()))
        console = Console(width=200, record=True)
        console.print(build_table(views, STEP_COLUMNS))
        header = next(line for line in console.export_text().splitlines() if line.strip()).split()
        assert figure in header and ({"runs/h", "turns/h"} - {figure}).isdisjoint(header)
