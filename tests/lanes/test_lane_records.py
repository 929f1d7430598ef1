"""Lane records: durable events.jsonl under the state root, read back by the corpus."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from lane_fakes import ScriptedClient, answer, make_repo, parse_error, read, write_spec

from vibey_gh.clock import SYSTEM_CLOCK
from vibey_gh.errors import BadInput
from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.lanes.loop import LaneOptions, run_lane
from vibey_gh.lanes.records import LaneRecorder, iter_records, new_run_id, read_record
from vibey_gh.lanes.specs import LaneSpec, load_spec
from vibey_gh.slots.corpus.corpus import build_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.state import StateLayout


@pytest.fixture
def spec(tmp_path: Path) -> LaneSpec:
    make_repo(tmp_path / "repo")
    return load_spec(write_spec(tmp_path / "specs", "rec", "../repo", ["pkg/a.py", "README.md"]))


def run_one(
    spec: LaneSpec, layout: StateLayout, run_id: str, replies: list
) -> tuple[Path, ScriptedClient]:
    client = ScriptedClient(replies)
    recorder = LaneRecorder(layout.lanes, run_id)
    run_lane(
        spec,
        client,
        ChatSettings(window=4096, max_tokens=32),
        recorder,
        options=LaneOptions(retries=1),
        runner={"kind": "embedded", "url": "http://127.0.0.1:1", "model": "default"},
    )
    return recorder.path, client


def test_a_record_lives_under_the_state_root_one_event_a_line(isolated_state: Path, spec) -> None:
    layout = StateLayout(isolated_state)
    path, _ = run_one(spec, layout, "rec-1", [read("pkg/a.py"), answer("Fine.")])
    assert path == isolated_state / "lanes" / "rec-1" / "events.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    lines = path.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    kinds = [e["event"] for e in events]
    assert kinds == ["start", "turn", "reply", "tool", "turn", "reply", "end"]
    assert all(e["run_id"] == "rec-1" and "t" in e and "mono" in e for e in events)
    start, end = events[0], events[-1]
    assert start["schema_version"] == 1 and start["spec"]["id"] == "rec"
    assert start["settings"]["temperature"] == 0 and start["settings"]["seed"] == 42
    assert start["runner"]["kind"] == "embedded"
    reply = events[2]
    assert reply["prompt_tokens"] == 120 and reply["tool_calls"][0]["name"] == "read_file"
    tool = events[3]
    assert tool["result"] == "def a():\n    return 1\n" and tool["chars"] == len(tool["result"])
    assert end["status"] == "answered" and end["answer"] == "Fine." and end["turns"] == 2
    assert end["t"] >= start["t"]


def test_the_corpus_rebuilds_the_lane_turns_from_its_records(layout: StateLayout, spec) -> None:
    _, first = run_one(spec, layout, "rec-a", [read("pkg/a.py"), read("README.md"), answer()])
    _, second = run_one(spec, layout, "rec-b", [parse_error(), read("pkg/a.py"), answer()])
    pool = build_pool(PoolSources(from_lanes=[layout.lanes]))
    runs = {run.run_id: run for run in pool.runs}
    assert set(runs) == {"rec-a", "rec-b"}
    assert [turn.messages for turn in runs["rec-a"].turns] == first.requests
    # the retried request is one turn in the pool, counted as a repeat
    assert [turn.messages for turn in runs["rec-b"].turns] == second.requests[1:]
    assert any("repeated turn" in note for note in pool.notes)
    assert all(turn.tools for run in pool.runs for turn in run.turns)
    # think time: from the reply before to the turn's first send, on the lane's monotonic clock
    events = [json.loads(line) for line in (layout.lanes / "rec-a" / "events.jsonl").open()]
    replies = [e["mono"] for e in events if e["event"] == "reply"]
    sends = [e["mono"] for e in events if e["event"] == "turn"]
    thinks = [turn.think_s for turn in runs["rec-a"].turns]
    assert thinks == [
        0.0,
        *(send - reply for reply, send in zip(replies[:-1], sends[1:], strict=True)),
    ]
    assert all(think is not None and think >= 0 for think in thinks)
    corpus = build_corpus(pool, window=4096, segments_per_stratum=2, segment_turns=2)
    sent = [m for client in (first, second) for m in client.requests]
    assert corpus.turn_count > 0
    assert all(turn.messages in sent for turn in corpus.turns())


def test_a_torn_last_line_is_flagged_not_fatal(layout: StateLayout, spec) -> None:
    path, _ = run_one(spec, layout, "rec-t", [answer()])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"event": "turn", "run_id": "rec-t", "payl')
    record = read_record(path)
    assert record.torn_tail and record.status == "answered"
    assert [r.run_id for r in iter_records(layout.lanes)] == ["rec-t"]


def test_a_record_without_an_end_has_no_status(isolated_state: Path) -> None:
    recorder = LaneRecorder(StateLayout(isolated_state).lanes, "half")
    recorder.write("turn", index=0, attempt=1, payload={"messages": [], "tools": []})
    assert read_record(recorder.folder).end is None
    assert read_record(recorder.folder).status is None


def test_a_bad_line_before_the_end_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('not json\n{"event": "end", "status": "answered"}\n', encoding="utf-8")
    with pytest.raises(BadInput, match="events.jsonl:1"):
        read_record(path)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[" * 200_000 + "]" * 200_000, "nested more than 64 levels deep"),
        ('{"event": "turn", "x": NaN}', "non-finite number NaN"),
    ],
)
def test_a_hostile_line_is_bad_input_naming_it(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(line + '\n{"event": "end", "status": "answered"}\n', encoding="utf-8")
    with pytest.raises(BadInput, match=f"events.jsonl:1: .*{problem}"):
        read_record(path)


def test_a_record_that_is_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "events.jsonl")
    with pytest.raises(BadInput, match="is a FIFO, not a regular file"):
        read_record(tmp_path / "events.jsonl")


def test_run_ids_are_unique_and_records_are_never_reused(isolated_state: Path) -> None:
    ids = {new_run_id("a b/c", SYSTEM_CLOCK) for _ in range(20)}
    assert len(ids) == 20 and all(i.startswith("a_b_c-") for i in ids)
    lanes = StateLayout(isolated_state).lanes
    LaneRecorder(lanes, "same").write("start")
    with pytest.raises(BadInput, match="already exists"):
        LaneRecorder(lanes, "same")
    for bad in ("", "../x", ".hidden", "a/b"):
        with pytest.raises(BadInput):
            LaneRecorder(lanes, bad)


def test_an_unknown_end_status_is_refused(isolated_state: Path) -> None:
    recorder = LaneRecorder(StateLayout(isolated_state).lanes, "odd")
    with pytest.raises(ValueError):
        recorder.end(status="maybe")
