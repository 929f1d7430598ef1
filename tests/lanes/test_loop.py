"""The lane loop against a scripted client: plan, tools, retries, limits, stops, records."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from lane_fakes import (
    ScriptedClient,
    answer,
    calls,
    make_repo,
    parse_error,
    read,
    refused_connection,
    unparsed,
    write_spec,
)

from vibey_gh.interfaces.slots_interface import ChatSettings, TurnResult
from vibey_gh.lanes.loop import LaneOptions, call_id, is_malformed, run_lane
from vibey_gh.lanes.plan import opening_messages
from vibey_gh.lanes.records import LaneRecorder, read_record
from vibey_gh.lanes.specs import LaneSpec, load_spec
from vibey_gh.lanes.tools import tool_definitions
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.state import StateLayout

SETTINGS = ChatSettings(window=4096, max_tokens=64)


@pytest.fixture
def spec(tmp_path: Path) -> LaneSpec:
    make_repo(tmp_path / "repo")
    return load_spec(write_spec(tmp_path / "specs", "tiny", "../repo", ["pkg/a.py", "pkg/b.py"]))


@pytest.fixture
def recorder(isolated_state: Path) -> LaneRecorder:
    return LaneRecorder(StateLayout(isolated_state).lanes, "tiny-run")


def lane(
    spec: LaneSpec, recorder: LaneRecorder, replies: list[Any], **options: Any
) -> tuple[Any, ScriptedClient]:
    client = ScriptedClient(replies)
    outcome = run_lane(spec, client, SETTINGS, recorder, options=LaneOptions(**options))
    return outcome, client


def test_a_lane_that_follows_its_plan_sends_the_turns_the_corpus_builds(
    spec: LaneSpec, recorder: LaneRecorder
) -> None:
    outcome, client = lane(spec, recorder, [read("pkg/a.py"), read("pkg/b.py"), answer("Done.")])
    assert outcome.status == "answered" and outcome.answer == "Done."
    assert (outcome.turns, outcome.tool_calls, outcome.retries) == (3, 2, 0)
    assert client.requests[0] == opening_messages(spec)
    assert all(tools == tool_definitions() for tools in client.tools)
    assert all(s.temperature == 0 and s.seed == 42 for s in client.settings)
    assert spec.source is not None
    planned = build_pool(PoolSources(specs=[spec.source])).runs[0].turns
    assert [turn.messages for turn in planned] == client.requests


def test_tool_results_reach_the_model_in_order(spec: LaneSpec, recorder: LaneRecorder) -> None:
    both = calls(("read_file", {"path": "pkg/a.py"}), ("list_dir", {"path": "pkg"}), text="Hm.")
    outcome, client = lane(spec, recorder, [both, answer()])
    assert outcome.tool_calls == 2
    assistant, first, second = client.requests[1][-3:]
    assert assistant["role"] == "assistant" and assistant["content"] == "Hm."
    ids = [call["id"] for call in assistant["tool_calls"]]
    assert ids == [call_id("tiny", 1, 0), call_id("tiny", 1, 1)] and len(set(ids)) == 2
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": "pkg/a.py"}
    assert (first["tool_call_id"], first["content"]) == (ids[0], "def a():\n    return 1\n")
    assert (second["tool_call_id"], second["content"]) == (ids[1], "a.py\nb.py")


def test_reading_etc_passwd_through_the_loop_is_a_tool_error(
    spec: LaneSpec, recorder: LaneRecorder
) -> None:
    outcome, client = lane(spec, recorder, [read("../../etc/passwd"), answer()])
    assert outcome.status == "answered" and outcome.refused_tools == 1
    reply = client.requests[1][-1]
    assert reply["role"] == "tool"
    assert reply["content"] == "error: '../../etc/passwd' is outside the repository"
    tool_events = read_record(recorder.path).of_kind("tool")
    assert tool_events[0]["refused"] is True


def test_a_parse_error_is_retried_and_counted(spec: LaneSpec, recorder: LaneRecorder) -> None:
    outcome, client = lane(spec, recorder, [parse_error(), read("pkg/a.py"), answer()], retries=2)
    assert outcome.status == "answered"
    assert (outcome.retries, outcome.turns, len(client.requests)) == (1, 2, 3)
    assert client.requests[0] == client.requests[1], "a retry sends the same payload"
    record = read_record(recorder.path)
    assert [(e["index"], e["attempt"]) for e in record.of_kind("turn")] == [(0, 1), (0, 2), (1, 1)]
    assert [e["malformed"] for e in record.of_kind("reply")] == [True, False, False]
    assert record.end is not None and record.end["retries"] == 1


def test_unparsed_arguments_past_the_retries_fail_the_lane(
    spec: LaneSpec, recorder: LaneRecorder
) -> None:
    outcome, client = lane(spec, recorder, [unparsed(), unparsed(), unparsed()], retries=2)
    assert outcome.status == "failed" and outcome.retries == 2
    assert len(client.requests) == 3
    assert outcome.error is not None and "malformed tool call after 2 retries" in outcome.error
    assert read_record(recorder.path).status == "failed"


def test_no_retries_means_one_attempt(spec: LaneSpec, recorder: LaneRecorder) -> None:
    outcome, client = lane(spec, recorder, [parse_error()], retries=0)
    assert outcome.status == "failed" and len(client.requests) == 1


def test_max_turns_ends_a_lane_that_never_answers(spec: LaneSpec, recorder: LaneRecorder) -> None:
    outcome, client = lane(spec, recorder, [read("pkg/a.py")] * 3, max_turns=3)
    assert outcome.status == "max_turns" and outcome.finished
    assert len(client.requests) == 3 and outcome.turns == 3


def test_a_turn_the_runner_did_not_serve_fails_the_lane(
    spec: LaneSpec, recorder: LaneRecorder
) -> None:
    outcome, _ = lane(spec, recorder, [refused_connection()])
    assert outcome.status == "failed" and not outcome.finished
    assert outcome.error == "turn 0: connection failed: refused"


def test_a_stop_ends_the_lane_between_turns(spec: LaneSpec, recorder: LaneRecorder) -> None:
    stop = threading.Event()

    def first(messages: list[dict[str, Any]]) -> TurnResult:
        stop.set()
        return read("pkg/a.py")

    client = ScriptedClient([first])
    outcome = run_lane(spec, client, SETTINGS, recorder, stop=stop)
    assert outcome.status == "interrupted" and len(client.requests) == 1
    assert read_record(recorder.path).status == "interrupted"


def test_a_missing_repository_is_a_recorded_failure(tmp_path: Path, recorder: LaneRecorder) -> None:
    spec = load_spec(write_spec(tmp_path / "specs", "gone", "../nowhere", ["a.py"]))
    outcome, client = lane(spec, recorder, [])
    assert outcome.status == "failed" and "repository folder not found" in (outcome.error or "")
    assert client.requests == []
    assert read_record(recorder.path).status == "failed"


def test_a_client_that_raises_is_recorded_then_raised(
    spec: LaneSpec, recorder: LaneRecorder
) -> None:
    def explode(messages: list[dict[str, Any]]) -> TurnResult:
        raise RuntimeError("socket on fire")

    with pytest.raises(RuntimeError):
        lane(spec, recorder, [explode])
    end = read_record(recorder.path).end
    assert end is not None and end["status"] == "failed" and "socket on fire" in end["error"]


def test_malformed_means_parse_errors_and_unparsed_arguments_only() -> None:
    assert is_malformed(parse_error()) and is_malformed(unparsed())
    assert not is_malformed(read("a.py")) and not is_malformed(refused_connection())


def test_bad_options_are_bad_input() -> None:
    from vibey_gh.errors import BadInput

    with pytest.raises(BadInput):
        LaneOptions(max_turns=0)
    with pytest.raises(BadInput):
        LaneOptions(retries=-1)


@pytest.mark.parametrize(
    ("tool", "path", "problem"),
    [
        ("read_file", "a\x00b", "holds a NUL character"),
        ("list_dir", "pkg\x00", "holds a NUL character"),
        ("read_file", "pkg/\ud800.py", "is not a valid file name"),
        ("read_file", "pkg/" + "a" * 5000, "is longer than 4096 characters"),
    ],
    ids=["NUL", "NUL in list_dir", "lone surrogate", "too long"],
)
def test_a_path_no_file_can_have_is_a_tool_error_the_model_reads(
    spec: LaneSpec, recorder: LaneRecorder, tool: str, path: str, problem: str
) -> None:
    outcome, client = lane(spec, recorder, [calls((tool, {"path": path})), answer()])
    assert outcome.status == "answered"
    reply = client.requests[1][-1]
    assert reply["role"] == "tool"
    assert reply["content"].startswith("error: the path ") and problem in reply["content"]
    assert len(read_record(recorder.path).of_kind("tool")) == 1  # recorded, readable back
