"""The lanes' tool executor: read-only, confined to the repository root, never opens a refused
path (checked with an audit hook that sees every open() of this process)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vibey_gh.lanes.sandbox import ToolExecutor
from vibey_gh.lanes.tools import TOOL_RESULT_CHAR_CAP, WorkingTree, run_tool

_watch = threading.local()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    opened = getattr(_watch, "opened", None)
    if opened is not None and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        opened.append(os.path.realpath(os.fsdecode(args[0])))


sys.addaudithook(_audit)


class OpenWatch:
    def __init__(self) -> None:
        self.opened: list[str] = []

    def __enter__(self) -> OpenWatch:
        _watch.opened = self.opened
        return self

    def __exit__(self, *exc: object) -> None:
        _watch.opened = None


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """repo at tmp/outer/inner/repo, and a canary at tmp/outer/etc/passwd — exactly where
    ../../etc/passwd from the repository's root leads."""
    repo = tmp_path / "outer" / "inner" / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (repo / "long.txt").write_text("x" * (TOOL_RESULT_CHAR_CAP + 500), encoding="utf-8")
    canary = tmp_path / "outer" / "etc" / "passwd"
    canary.parent.mkdir(parents=True)
    canary.write_text("root:x:0:0:canary\n", encoding="utf-8")
    yield repo, canary


def executed(executor: ToolExecutor, name: str, args: dict[str, Any]) -> tuple[Any, list[str]]:
    with OpenWatch() as watch:
        outcome = executor.execute(name, args)
    return outcome, watch.opened


def test_the_watch_does_see_an_ordinary_read(layout: tuple[Path, Path]) -> None:
    repo, _ = layout
    outcome, opened = executed(ToolExecutor(repo), "read_file", {"path": "pkg/a.py"})
    assert outcome.text == "one\ntwo\nthree\n" and not outcome.refused
    assert str((repo / "pkg" / "a.py").resolve()) in opened


def test_climbing_out_to_etc_passwd_is_a_tool_error_and_never_opened(
    layout: tuple[Path, Path],
) -> None:
    repo, canary = layout
    assert (repo / "../../etc/passwd").resolve() == canary.resolve()
    outcome, opened = executed(ToolExecutor(repo), "read_file", {"path": "../../etc/passwd"})
    assert outcome.refused and outcome.is_error
    assert outcome.text == "error: '../../etc/passwd' is outside the repository"
    assert "canary" not in outcome.text
    assert str(canary.resolve()) not in opened
    assert opened == []


@pytest.mark.parametrize("path", ["/etc/passwd", "pkg/../../../etc/passwd", "..", "../inner"])
def test_absolute_and_escaping_paths_are_refused(layout: tuple[Path, Path], path: str) -> None:
    repo, _ = layout
    for tool in ("read_file", "list_dir"):
        outcome, opened = executed(ToolExecutor(repo), tool, {"path": path})
        assert outcome.refused, (tool, path, outcome.text)
        assert opened == []


def test_a_link_to_a_file_outside_is_refused_unopened(layout: tuple[Path, Path]) -> None:
    repo, canary = layout
    (repo / "innocent.txt").symlink_to(canary)
    outcome, opened = executed(ToolExecutor(repo), "read_file", {"path": "innocent.txt"})
    assert outcome.refused and "outside the repository" in outcome.text
    assert str(canary.resolve()) not in opened


def test_a_linked_folder_leading_outside_is_refused_for_both_tools(
    layout: tuple[Path, Path],
) -> None:
    repo, canary = layout
    (repo / "config").symlink_to(canary.parent, target_is_directory=True)
    executor = ToolExecutor(repo)
    outcome, opened = executed(executor, "read_file", {"path": "config/passwd"})
    assert outcome.refused and str(canary.resolve()) not in opened
    listing, _ = executed(executor, "list_dir", {"path": "config"})
    assert listing.refused and "passwd" not in listing.text


def test_a_link_that_stays_inside_reads_as_missing_like_the_corpus(
    layout: tuple[Path, Path],
) -> None:
    repo, _ = layout
    (repo / "alias.py").symlink_to(repo / "pkg" / "a.py")
    outcome, _ = executed(ToolExecutor(repo), "read_file", {"path": "alias.py"})
    assert not outcome.refused
    assert outcome.text == run_tool("read_file", {"path": "alias.py"}, WorkingTree(repo))
    assert outcome.text == "error: no such file: alias.py"


def test_allowed_results_are_exactly_the_corpus_tool_results(layout: tuple[Path, Path]) -> None:
    repo, _ = layout
    executor = ToolExecutor(repo)
    tree = WorkingTree(repo)
    for name, args in [
        ("read_file", {"path": "long.txt"}),
        ("read_file", {"path": "pkg/a.py", "offset": 2, "limit": 1}),
        ("read_file", {"path": "pkg/../pkg/a.py"}),
        ("read_file", {"path": "missing.py"}),
        ("read_file", {"path": "pkg"}),
        ("list_dir", {"path": "."}),
        ("list_dir", {"path": "pkg"}),
        ("read_file", {}),
        ("grep", {"pattern": "x"}),
    ]:
        outcome, _ = executed(executor, name, args)
        assert outcome.text == run_tool(name, args, tree), (name, args)
        assert not outcome.refused
    long, _ = executed(executor, "read_file", {"path": "long.txt"})
    total = TOOL_RESULT_CHAR_CAP + 500
    assert long.text.endswith(f"[truncated: 500 of {total:,} characters not shown]")


def test_a_named_pipe_does_not_block_the_lane(layout: tuple[Path, Path]) -> None:
    repo, _ = layout
    os.mkfifo(repo / "pipe")
    outcome, _ = executed(ToolExecutor(repo), "read_file", {"path": "pipe"})
    assert outcome.text == "error: no such file: pipe"


def test_a_missing_root_is_refused_up_front(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        ToolExecutor(tmp_path / "nope")
