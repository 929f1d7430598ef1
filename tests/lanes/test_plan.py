"""The system prompt and the plan: a lane's opening, the same wherever it is built."""

from __future__ import annotations

from pathlib import Path

from vibey_gh.lanes.plan import SYSTEM_PROMPT, build_plan, opening_messages
from vibey_gh.lanes.specs import LaneSpec
from vibey_gh.lanes.tools import TOOL_RESULT_CHAR_CAP

SPEC = LaneSpec(
    id="state-files",
    title="Where files go",
    task="\n  Explain the state folder.\n",
    repository=Path("/somewhere/repo"),
    files=("state.py", "cli/*.py"),
)


def test_plan_names_the_task_and_the_files_in_order() -> None:
    plan = build_plan(SPEC)
    assert plan.startswith("Task state-files: Where files go\n\nExplain the state folder.\n")
    assert plan.index("   - state.py") < plan.index("   - cli/*.py")
    assert "read_file" in plan
    assert plan.endswith("citing the files and functions you rely on.")


def test_plan_depends_on_the_spec_alone() -> None:
    moved = LaneSpec(SPEC.id, SPEC.title, SPEC.task, Path("/other"), SPEC.files, "HEAD~1")
    assert build_plan(moved) == build_plan(SPEC)
    assert "/somewhere" not in build_plan(SPEC)


def test_system_prompt_names_the_tools_and_the_cut() -> None:
    assert "read_file" in SYSTEM_PROMPT
    assert "list_dir" in SYSTEM_PROMPT
    assert f"{TOOL_RESULT_CHAR_CAP:,} characters" in SYSTEM_PROMPT


def test_opening_messages_are_system_then_plan() -> None:
    messages = opening_messages(SPEC)
    assert messages == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": build_plan(SPEC)},
    ]
    messages.append({"role": "user", "content": "x"})
    assert len(opening_messages(SPEC)) == 2
