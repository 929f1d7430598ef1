"""The step table, built from a list of columns: one place says what each column shows.

A sweep of whole runs is decided on runs per hour: its table says so in the throughput
column's header ("runs/h (turns/h)"), shows runs per hour with their interval and the turns
per hour beside them, and gives the latency columns as "turn / run".

Each `StepColumn` gives a step's cell three ways: the full cell of the Markdown report, a
brief cell for a terminal of 80 columns, and the numbers behind it (for `--json` and CSV,
where "14,606 (13.9k–15.3k)" is three numbers, not a string). A new column is one more
entry in `STEP_COLUMNS`; Markdown, the terminal, JSON and CSV all follow it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...judging.judge import SweepJudgement
from ...judging.records import StepRecord
from .model_column import model_gain, table_prediction
from .step_columns import (
    STEP_COLUMNS,
    StepColumn,
    StepView,
    inconclusive_sentence,
    shown_label,
    throughput_brief,
    throughput_cell,
    throughput_sentence,
    verdict_brief,
    verdict_cell,
)

COLUMNS = tuple(column.header for column in STEP_COLUMNS)
# a sweep of whole runs is decided on runs per hour: its headers say so
RUN_HEADERS = {
    "turns/h": "runs/h (turns/h)",
    "p50 s": "p50 s turn / run",
    "p95 s": "p95 s turn / run",
}
RUN_COLUMNS = tuple(RUN_HEADERS.get(column, column) for column in COLUMNS)
# the terminal's narrower headers: the throughput column holds runs per hour
RUN_SHORT_HEADERS = {"turns/h": "runs/h"}


def short_header(column: StepColumn, on_runs: bool) -> str:
    """The terminal's header of `column`, naming runs/h for a sweep decided on it."""
    return RUN_SHORT_HEADERS.get(column.short, column.short) if on_runs else column.short


def columns_for(judgement: SweepJudgement) -> tuple[str, ...]:
    """The table's columns: the run columns where the sweep is decided on runs per hour."""
    return RUN_COLUMNS if judgement.figures.decided_by == "runs/h" else COLUMNS


def step_views(steps: Sequence[StepRecord], judgement: SweepJudgement) -> list[StepView]:
    """Each step with its verdict and row name ("N=1", "N=1 again", "N=2", …); the ideal N
    is the qualifying step at the judgement's N (none when the answer is one by default)."""
    views = []
    one_slot_seen = 0
    ideal_marked = False
    chosen = judgement.knee.chosen.index if judgement.knee is not None else None
    speeds = {figures.index: figures.speed for figures in judgement.figures.steps}
    prediction = table_prediction(judgement.verdicts)
    identified = prediction is not None and prediction.identified
    for step, verdict in zip(steps, judgement.verdicts, strict=True):
        if step.slots == 1:
            one_slot_seen += 1
            name = "N=1" if one_slot_seen == 1 else "N=1 again"
        else:
            name = f"N={step.slots}"
        if chosen is not None:
            ideal = verdict.index == chosen
        else:
            ideal = not ideal_marked and verdict.qualifies and verdict.slots == judgement.ideal
        ideal_marked = ideal_marked or ideal
        label = shown_label(verdict, judgement)
        views.append(
            StepView(
                step,
                verdict,
                name,
                ideal,
                label,
                speed=speeds.get(verdict.index),
                model_gain=model_gain(prediction, step.slots),
                model_identified=identified,
            )
        )
    return views


def step_rows(
    steps: Sequence[StepRecord],
    judgement: SweepJudgement,
    columns: Sequence[StepColumn] = STEP_COLUMNS,
) -> list[list[str]]:
    """The full cells, as in the Markdown report."""
    return [[c.full(view) for c in columns] for view in step_views(steps, judgement)]


def step_values(
    steps: Sequence[StepRecord],
    judgement: SweepJudgement,
    columns: Sequence[StepColumn] = STEP_COLUMNS,
) -> list[dict[str, object]]:
    """Each step's numbers by key (numbers as numbers, null where unknown)."""
    rows = []
    for view in step_views(steps, judgement):
        row: dict[str, object] = {}
        for column in columns:
            row.update(column.values(view))
        rows.append(row)
    return rows


def markdown_table(rows: Sequence[Sequence[str]], columns: Sequence[str] = COLUMNS) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [line(columns), "|" + "|".join("---" for _ in columns) + "|"]
    out.extend(line(r) for r in rows)
    return "\n".join(out)


__all__ = [
    "COLUMNS",
    "RUN_COLUMNS",
    "STEP_COLUMNS",
    "StepColumn",
    "StepView",
    "columns_for",
    "short_header",
    "shown_label",
    "inconclusive_sentence",
    "markdown_table",
    "step_rows",
    "step_values",
    "step_views",
    "throughput_brief",
    "throughput_cell",
    "throughput_sentence",
    "verdict_brief",
    "verdict_cell",
]
