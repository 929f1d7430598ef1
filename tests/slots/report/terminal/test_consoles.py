"""`show --format markdown` as Markdown a renderer keeps apart: paragraphs, lists, the table."""

from __future__ import annotations

import io

from rich.console import Console

from vibey_gh.slots.report.terminal.consoles import markdown_console, markdown_line


def test_each_line_is_its_own_block_and_indented_lines_are_a_list() -> None:
    buffer = io.StringIO()
    console = markdown_console(Console(file=buffer, width=200))
    console.print("evidence 0123 — measured today")
    console.print("| step | verdict |\n|---|---|\n| N=1 | floor |")
    console.print("verdicts:")
    console.print("  N=1        floor")
    console.print("  N=2        qualifies, +93.2% (+84% to +102%)")
    console.print("ideal N = 2 — it served more")
    assert buffer.getvalue().splitlines() == [
        "evidence 0123 — measured today",
        "",
        "| step | verdict |",
        "|---|---|",
        "| N=1 | floor |",
        "",
        "verdicts:",
        "",
        "- N=1 floor",
        "- N=2 qualifies, +93.2% (+84% to +102%)",
        "",
        "ideal N = 2 — it served more",
    ]


def test_a_line_keeps_its_words() -> None:
    assert markdown_line("  /tmp/state/evidence/x.json") == ("item", "- /tmp/state/evidence/x.json")
    assert markdown_line("decided on turns/h") == ("paragraph", "decided on turns/h")
