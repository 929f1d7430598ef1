"""Runs from recorded agent traces: prefixes shared as the block ids are, depths fitted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.slots.corpus.corpus import build_corpus, write_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.corpus.sources.block_text import UNIT, block_text
from vibey_gh.slots.corpus.sources.traces import runs_from_traces

SAMPLES = Path("/work/shared/data/agent-traces")
needs_samples = pytest.mark.skipif(
    not SAMPLES.is_dir(), reason=f"the sample traces are not on this machine ({SAMPLES})"
)


def request(tokens_in: int, ids: list[int], **extra: Any) -> dict[str, Any]:
    return {"t": 0.0, "type": "n", "in": tokens_in, "out": 20, "hash_ids": ids, **extra}


def write_trace(folder: Path, name: str, requests: list[dict[str, Any]], **top: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    body = {"id": name, "block_size": 4, "hash_id_scope": "local", "requests": requests, **top}
    path.write_text(json.dumps(body))
    return path


def prompt(messages: list[dict[str, Any]]) -> str:
    return "".join(message["content"] for message in messages)


def test_requests_sharing_block_ids_share_that_prefix_and_nothing_more(tmp_path: Path) -> None:
    path = write_trace(
        tmp_path,
        "a",
        [
            request(12, [1, 2, 3], think_time=0.0),
            request(18, [1, 2, 3, 4], think_time=2.5),
            request(14, [1, 9, 10], think_time=1.0),
        ],
    )
    (run,) = runs_from_traces([path], window=4096, fit="scale").runs
    first, second, third = (prompt(turn.messages) for turn in run.turns)
    blocks = [block_text("a", block, 4) for block in (1, 2, 3, 4)]
    assert first == "".join(blocks[:3])
    assert second.startswith("".join(blocks))
    assert third.startswith(blocks[0]) and not third.startswith(blocks[0] + blocks[1])
    # The 2 tokens past the last block are the request's own.
    assert len(second) == 18 * UNIT
    assert [turn.think_s for turn in run.turns] == [0.0, 2.5, 1.0]
    assert [turn.max_tokens for turn in run.turns] == [20, 20, 20]
    # The blocks already sent are the same message objects in the next turn.
    assert run.turns[1].messages[0] is run.turns[0].messages[0]


def test_two_traces_with_local_ids_share_no_text(tmp_path: Path) -> None:
    first = write_trace(tmp_path, "a", [request(8, [1, 2])])
    second = write_trace(tmp_path, "b", [request(8, [1, 2])])
    runs = runs_from_traces([first, second], window=4096, fit="scale").runs
    texts = [prompt(run.turns[0].messages) for run in runs]
    assert texts[0][:6] != texts[1][:6]


def test_scale_fits_the_deepest_turn_into_the_window_and_records_the_factor(
    tmp_path: Path,
) -> None:
    requests = [request(64 * n, list(range(1, n + 1))) for n in (10, 20, 40)]
    path = write_trace(tmp_path, "deep", requests, block_size=64)
    imported = runs_from_traces([path], window=1024, fit="scale")
    (run,) = imported.runs
    deepest = max(turn.depth_estimate for turn in run.turns)
    assert 0.9 * 1024 <= deepest <= 1024
    (facts,) = imported.sources[0]["runs"]
    assert imported.sources[0]["fit"] == "scale"
    assert 0.35 < facts["factor"] < 0.4
    assert facts["dropped_turns"] == 0


def test_scale_leaves_room_for_the_deepest_turn_s_answer(tmp_path: Path) -> None:
    requests = [{**request(64 * n, list(range(1, n + 1))), "out": 2000} for n in (10, 20, 40)]
    path = write_trace(tmp_path, "deep", requests, block_size=64)
    (run,) = runs_from_traces([path], window=1024, fit="scale", answer_cap=200).runs
    needs = [turn.depth_estimate + min(turn.max_tokens or 200, 200) for turn in run.turns]
    assert max(needs) <= 1024 and max(needs) >= 0.9 * 1024
    dropped = runs_from_traces([path], window=1024, fit="drop", answer_cap=200).runs
    # 640 tokens and a 200-token answer fit 1,024; 1,280 does not, whatever its answer
    assert [turn.depth_estimate <= 824 for turn in dropped[0].turns] == [True]


def test_scale_caps_each_answer_at_out_times_the_same_factor(tmp_path: Path) -> None:
    requests = [
        {**request(64 * n, list(range(1, n + 1))), "out": out}
        for n, out in ((10, 400), (20, 1000), (40, 1))
    ]
    path = write_trace(tmp_path, "deep", requests, block_size=64)
    imported = runs_from_traces([path], window=1024, fit="scale")
    (run,) = imported.runs
    factor = imported.sources[0]["runs"][0]["factor"]
    assert imported.sources[0]["out_scaled"] is True
    # The recorded share of reading to writing is kept; a cap never falls below one token.
    assert [turn.max_tokens for turn in run.turns] == [
        round(400 * factor),
        round(1000 * factor),
        1,
    ]
    dropped = runs_from_traces([path], window=1024, fit="drop").runs[0]
    assert [turn.max_tokens for turn in dropped.turns] == [400]


def test_drop_keeps_depths_and_leaves_out_what_is_deeper(tmp_path: Path) -> None:
    requests = [request(4 * n, list(range(1, n + 1))) for n in (100, 200, 800)]
    path = write_trace(tmp_path, "deep", requests)
    imported = runs_from_traces([path], window=1024, fit="drop")
    (run,) = imported.runs
    assert len(run.turns) == 2
    assert imported.sources[0]["runs"][0]["dropped_turns"] == 1
    assert imported.sources[0]["runs"][0]["factor"] == 1.0
    assert any("left out 1 turn" in note for note in imported.notes)


def test_subagents_become_child_runs_and_are_counted(tmp_path: Path) -> None:
    child = {"type": "subagent", "t": 3.0, "agent_id": "x", "requests": [request(8, [5, 6])]}
    path = write_trace(tmp_path, "p", [request(8, [1, 2]), child, request(12, [1, 2, 3])])
    imported = runs_from_traces([path], window=4096, fit="scale")
    assert sorted(run.run_id for run in imported.runs) == ["p", "p.sa1"]
    assert imported.sources[0]["subagents"] == 1
    parent = next(run for run in imported.runs if run.run_id == "p")
    assert [turn.index for turn in parent.turns] == [0, 1]


@pytest.mark.parametrize(
    ("requests", "field"),
    [
        ([{"t": 0, "type": "n", "out": 1, "hash_ids": []}], "requests[0].in"),
        ([request(8, [1, 2], think_time=-1.0)], "requests[0].think_time"),
        ([request(8, [1, 2], t=-3)], "requests[0].t"),
        ([request(8, [1, 2]), request(4, [1, 2, 3])], "requests[1].hash_ids"),
    ],
)
def test_bad_requests_name_the_file_and_field(
    tmp_path: Path, requests: list[dict[str, Any]], field: str
) -> None:
    path = write_trace(tmp_path, "bad", requests)
    with pytest.raises(BadInput) as caught:
        runs_from_traces([path], window=4096, fit="scale")
    message = str(caught.value)
    assert str(path) in message and field in message
    assert "\n" not in message


def test_a_trace_that_is_not_json_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"id": "x", "requests": [')
    with pytest.raises(BadInput, match="broken.json"):
        runs_from_traces([path], window=4096, fit="scale")


@needs_samples
def test_the_sample_traces_build_a_byte_identical_corpus_twice_with_room_for_every_answer(
    tmp_path: Path,
) -> None:
    written = []
    for attempt in ("one", "two"):
        pool = build_pool(
            PoolSources(from_traces=[SAMPLES], fit="scale"), window=4096, answer_cap=768
        )
        path = tmp_path / f"{attempt}.json"
        write_corpus(build_corpus(pool, window=4096, answer_cap=768), path)
        written.append(path.read_bytes())
    assert written[0] == written[1]
    data = json.loads(written[0])
    traces = [source for source in data["sources"] if source["source"] == "trace"]
    assert len(traces) == 24
    assert all(source["fit"] == "scale" for source in traces)
    turns = [turn for segment in data["segments"] for turn in segment["turns"]]
    assert all("think_s" in turn and "max_tokens" in turn for turn in turns)
    # The headroom rule by construction: no prompt and its answer cap pass the window, so a
    # runner has nothing to shift, cut or refuse; the deepest still nearly fills it.
    needs = [turn["depth_estimate"] + min(turn["max_tokens"], 768) for turn in turns]
    assert max(needs) <= 4096
    assert max(needs) >= 0.9 * 4096


def test_a_trace_id_that_is_not_a_plain_name_is_bad_input(tmp_path: Path) -> None:
    path = write_trace(tmp_path, "odd", [request(8, [1, 2])], id="two\nlines")
    with pytest.raises(BadInput, match=r"id: expected 1 to 48 letters"):
        runs_from_traces([path], window=4096, fit="scale")


def test_a_think_time_over_a_day_is_counted_unknown(tmp_path: Path) -> None:
    requests = [request(8, [1, 2], think_time=0.0), request(8, [1, 2], think_time=1e9)]
    imported = runs_from_traces([write_trace(tmp_path, "t", requests)], window=4096, fit="scale")
    assert [turn.think_s for turn in imported.runs[0].turns] == [0.0, None]
    assert imported.notes == [
        "trace t: 1 turn(s) whose think time cannot be true (negative, over a day, or dated "
        "outside 2000-2099) are counted unknown"
    ]
