"""The step table in a terminal: rich's table at the console's width, the ideal N marked.

Columns are dropped, least needed first (`StepColumn.priority`), until the table fits; the
brief cells never fold mid-number. What was left out is named under the table, with the
commands that show everything (`--format markdown`, the report).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from ..tables.step_table import STEP_COLUMNS, StepColumn, StepView, short_header

IDEAL_STYLE = "bold green"
UNBOUNDED = 10_000


def build_table(views: Sequence[StepView], columns: Sequence[StepColumn]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, header_style="bold")
    on_runs = any(view.on_runs for view in views)
    for column in columns:
        header = short_header(column, on_runs)
        table.add_column(header, justify="right" if column.numeric else "left", no_wrap=True)
    for view in views:
        table.add_row(*(c.brief(view) for c in columns), style=IDEAL_STYLE if view.ideal else None)
    return table


def fitting_table(
    views: Sequence[StepView], console: Console, columns: Sequence[StepColumn] = STEP_COLUMNS
) -> tuple[Table, list[StepColumn]]:
    """The table with as many columns as fit `console`'s width, and the columns left out."""
    kept = list(columns)
    dropped: list[StepColumn] = []
    unbounded = console.options.update_width(UNBOUNDED)  # measured as wide as it wants
    while True:
        table = build_table(views, kept)
        width = Measurement.get(console, unbounded, table).maximum
        if width <= console.width or len(kept) <= 2:
            return table, dropped
        least = max(kept, key=lambda c: c.priority)
        kept.remove(least)
        dropped.insert(0, least)


def left_out_line(dropped: Sequence[StepColumn]) -> str | None:
    if not dropped:
        return None
    names = ", ".join(column.header for column in dropped)
    return f"(not shown at this width: {names}; --format markdown or the report has them all)"


__all__ = ["build_table", "fitting_table", "left_out_line"]
