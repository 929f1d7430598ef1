"""Runs from coding-agent session logs: Codex CLI rollouts and Claude Code sessions."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.slots.corpus.sources.json_lines import json_records
from vibey_gh.slots.corpus.sources.sessions import runs_from_sessions

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"
CODEX = next(FIXTURES.glob("rollout-*.jsonl"))
CLAUDE = FIXTURES / "5c3e9a70-1d2b-4f8e-b6a1-92d4c0e7f318.jsonl"
# Words that appear only in what was said in the fixtures: never in notes or sources.
SAID = ("zebra-quartz", "subtract", "calc.py", "pytest")


def roles(messages: list[dict[str, object]]) -> list[object]:
    return [message["role"] for message in messages]


def test_a_codex_rollout_is_one_run_with_its_tool_time_between_turns() -> None:
    imported = runs_from_sessions([CODEX])
    (run,) = imported.runs
    assert run.run_id == "codex:0199d1c4-7a2e-7b31-9f0e-3c5a8e2b41d7"
    assert run.source == "session"
    assert [turn.think_s for turn in run.turns] == [None, 7.0, 1.0, 9.0]
    first, second, _, last = run.turns
    assert roles(first.messages) == ["user", "user"]
    assert roles(last.messages) == ["user", "user"] + ["assistant", "tool"] * 3
    call = second.messages[2]["tool_calls"][0]  # type: ignore[index]
    assert call["function"]["name"] == "shell"
    assert json.loads(call["function"]["arguments"]) == {"command": ["bash", "-lc", "pytest -q"]}
    assert second.messages[3] == {
        "role": "tool",
        "tool_call_id": "call_A1",
        "content": json.dumps(
            {
                "output": "F.\n1 failed, 1 passed",
                "metadata": {"exit_code": 1, "duration_seconds": 6.8},
            },
            separators=(",", ":"),
        ),
    }
    assert last.messages[-1]["content"] == "..\n2 passed"
    assert all(turn.depth_estimate > 0 for turn in run.turns)
    (source,) = imported.sources
    assert source["agent"] == "codex" and source["agent_version"] == "0.46.0"
    assert source["started"].startswith("2026-03-02T10:00:00")
    assert source["unknown_records"] == 1 and source["skipped_records"] == 1
    assert any("ghost_kind_from_a_newer_cli ×1" in note for note in imported.notes)


def test_a_claude_code_session_skips_sidechains_and_tolerates_a_torn_last_line() -> None:
    imported = runs_from_sessions([CLAUDE])
    (run,) = imported.runs
    assert run.run_id == "claude-code:5c3e9a70-1d2b-4f8e-b6a1-92d4c0e7f318"
    assert [turn.think_s for turn in run.turns] == [None, 6.0, 0.5]
    first, second, third = run.turns
    # the log records usage: a system message stands in for what it leaves out
    assert roles(first.messages) == ["system", "user"]
    assert roles(second.messages) == ["system", "user", "assistant", "tool"]
    tool_call = second.messages[2]["tool_calls"][0]  # type: ignore[index]
    assert tool_call["id"] == "toolu_01" and tool_call["function"]["name"] == "Bash"
    assert roles(third.messages) == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert third.messages[4]["content"] == "add subtracts; reading calc.py."
    assert third.messages[5]["content"] == "def add(a, b):\n    return a - b\n"
    assert "sub-agent note" not in json.dumps([t.messages for t in run.turns])
    (source,) = imported.sources
    assert source["agent"] == "claude-code" and source["agent_version"] == "1.0.98"
    assert source["models"] == ["claude-sonnet-4-5-20250929"]
    assert source["skipped_records"] == 1 and source["unknown_records"] == 1
    assert any("unfinished last line" in note for note in imported.notes)


def test_nothing_said_in_a_session_reaches_notes_or_sources() -> None:
    imported = runs_from_sessions([CODEX, CLAUDE])
    printed = json.dumps([imported.notes, imported.sources])
    for word in SAID:
        assert word not in printed


def test_a_session_of_unknown_records_only_is_bad_input_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text('{"type": "alpha"}\n{"kind": 3}\n')
    with pytest.raises(BadInput) as caught:
        runs_from_sessions([path])
    assert str(path) in str(caught.value) and "type" in str(caught.value)
    assert "2 record(s) of unknown type" in str(caught.value)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (
            '{"type":"response_item","timestamp":"yesterday","payload":{"type":"reasoning"}}',
            "timestamp",
        ),
        (
            '{"type":"response_item","timestamp":"2026-03-02T10:00:00Z","payload":{"type":"function_call","name":"x","call_id":"c"}}',
            "payload.arguments",
        ),
    ],
)
def test_a_bad_record_names_the_file_line_and_json_path(
    tmp_path: Path, line: str, field: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(CODEX.read_text().splitlines()[0] + "\n" + line + "\n")
    with pytest.raises(BadInput) as caught:
        runs_from_sessions([path])
    assert f"{path}:2" in str(caught.value) and field in str(caught.value)


def test_a_bad_line_before_the_last_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    lines = CODEX.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1][:30], lines[2]]) + "\n")
    with pytest.raises(BadInput, match=r"torn.jsonl:2"):
        runs_from_sessions([path])


def test_records_stream_without_holding_the_file(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    record = json.dumps({"type": "event_msg", "payload": {"pad": "x" * 4000}}) + "\n"
    with path.open("w") as out:
        for _ in range(5000):  # 20 MB
            out.write(record)
    tracemalloc.start()
    count = sum(1 for _ in json_records(path, []))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 5000
    assert peak < 4 << 20


def test_a_file_of_sidechain_lines_only_is_that_sub_agents_run(tmp_path: Path) -> None:
    lines = []
    for raw in CLAUDE.read_text().splitlines()[:-1]:  # without the torn last line
        record = json.loads(raw)
        if record.get("type") in ("user", "assistant"):
            record["isSidechain"] = True
        lines.append(json.dumps(record))
    path = tmp_path / "agent-a1b2.jsonl"
    path.write_text("\n".join(lines) + "\n")
    imported = runs_from_sessions([CLAUDE, path])
    ids = sorted(run.run_id for run in imported.runs)
    assert ids == [
        "claude-code:5c3e9a70-1d2b-4f8e-b6a1-92d4c0e7f318",
        "claude-code:5c3e9a70-1d2b-4f8e-b6a1-92d4c0e7f318.agent-a1b2",
    ]
    side = next(run for run in imported.runs if run.run_id.endswith("agent-a1b2"))
    # The same requests as the main file's: its lines, read as one conversation.
    assert [turn.think_s for turn in side.turns] == [None, 6.0, 0.5]
    assert any("sub-agent's conversation" in note for note in imported.notes)
