"""Inputs too big for a corpus of whole runs are refused from their counts, before they are
built (the 88 MB trace's time and memory are in bench/big_trace.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.sessions import CLAUDE
from vibey_gh.errors import BadInput
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.corpus.sources.traces import estimated_output, runs_from_traces

MIB = 1 << 20


def big_trace(folder: Path, requests: int, tokens_in: int) -> Path:
    body = {
        "id": "big",
        "block_size": 64,
        "requests": [
            {"t": 0, "type": "n", "in": tokens_in, "out": 10, "hash_ids": [1, 2]}
            for _ in range(requests)
        ],
    }
    path = folder / "big.json"
    path.write_text(json.dumps(body))
    return path


def test_the_estimate_is_three_characters_a_token_scaled_or_dropped_as_the_fit_would() -> None:
    raw = b'{"requests":[{"in": 1000},{"in":3000},{"x":"\\"in\\": 99999"}]}'
    # scale: the deepest with its answer cap fills the window of 2,000
    assert estimated_output(raw, 2000, "scale", 200) == 3 * (round(1000 * 2000 / 3200) + 1875)
    # drop: what does not fit with its answer is left out; a string's "in" is not a request's
    assert estimated_output(raw, 2000, "drop", 200) == 3 * 1000


def test_a_trace_past_the_cap_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = big_trace(tmp_path, requests=200, tokens_in=60_000)
    # a torn end: parsing would fail; the size is decided first, from the counts
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(BadInput) as caught:
        runs_from_traces([path], window=65_536, fit="scale", answer_cap=768, size_cap=16 * MIB)
    said = str(caught.value)
    assert str(path) in said and "more than the 16 MiB a corpus file may hold" in said
    assert "--shape segments" in said and "\n" not in said
    # without a cap (a corpus of segments takes a few turns of each) it is read as before
    with pytest.raises(BadInput, match="not valid JSON"):
        runs_from_traces([path], window=65_536, fit="scale", answer_cap=768)


def test_a_session_past_the_cap_is_refused_while_it_is_read(tmp_path: Path) -> None:
    # the fixture's requests each cost 14,004 tokens: three of them pass 100,000 characters
    with pytest.raises(BadInput) as caught:
        build_pool(PoolSources(from_sessions=[CLAUDE]), size_cap=100_000)
    assert str(CLAUDE) in str(caught.value) and "corpus of whole runs" in str(caught.value)
    assert build_pool(PoolSources(from_sessions=[CLAUDE]), size_cap=200_000).runs


def test_lane_records_and_transcripts_past_the_cap_are_refused_by_their_size(
    tmp_path: Path,
) -> None:
    lanes = tmp_path / "lanes" / "run-1"
    lanes.mkdir(parents=True)
    (lanes / "events.jsonl").write_text("x" * 5000)
    with pytest.raises(BadInput, match="lanes: its runs would put ~0 MiB"):
        build_pool(PoolSources(from_lanes=[tmp_path / "lanes"]), size_cap=4000)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("y" * 5000)
    with pytest.raises(BadInput, match="t.jsonl: its runs would put"):
        build_pool(PoolSources(from_transcripts=[transcript]), size_cap=4000)
