"""The consoles `slots show` prints through: one whose reader may leave early, and one that
writes Markdown a renderer keeps apart.

`show --format markdown` is read rendered (a wiki, a pull request): plain lines in a row
become one paragraph there, and indented lines are not a list. So each block is set apart by
a blank line, an indented line becomes a list item, and the step table stays a table.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console


class ReaderMayLeave(Console):
    def on_broken_pipe(self) -> None:
        """`show | head`: rich would exit 1, but the reader had all it wanted. The broken pipe
        goes on to the command's edge, which ends quietly with exit 0."""
        raise BrokenPipeError


def show_console(*, soft_wrap: bool) -> ReaderMayLeave:
    """The console `slots show` prints through: markup off, as evidence holds text from
    elsewhere (paths, model names, "vibey-gh[plots]"); `soft_wrap` off a terminal."""
    return ReaderMayLeave(highlight=False, markup=False, soft_wrap=soft_wrap)


TABLE, ITEM, PARAGRAPH = "table", "item", "paragraph"


def markdown_line(line: str) -> tuple[str, str]:
    """(its kind, the line as Markdown): a table row as it is, an indented line as a list
    item (the padding that aligned it in a terminal left out), anything else a paragraph."""
    if line.startswith("|"):
        return TABLE, line
    if line.startswith("  ") and line.strip():
        return ITEM, "- " + re.sub(r" {2,}", " ", line.strip())
    return PARAGRAPH, line


class MarkdownConsole(ReaderMayLeave):
    """Prints each line as Markdown, a blank line between blocks: the table's rows together,
    a list's items together, each other line a paragraph of its own."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._last: str | None = None

    def print(self, *objects: Any, **kwargs: Any) -> None:
        text = " ".join(str(o) for o in objects)
        for line in text.split("\n"):
            kind, shown = markdown_line(line)
            if not shown.strip():
                continue
            if self._last is not None and not (kind == self._last and kind in (TABLE, ITEM)):
                super().print("", **kwargs)
            self._last = kind
            super().print(shown, **kwargs)


def markdown_console(console: Console) -> MarkdownConsole:
    """A Markdown console writing where `console` writes."""
    return MarkdownConsole(
        file=console.file,
        width=console.width,
        highlight=False,
        markup=False,
        color_system=None,
        soft_wrap=True,
    )


__all__ = ["MarkdownConsole", "ReaderMayLeave", "markdown_console", "markdown_line", "show_console"]
