"""The corpus profile: runs, depth and tool-time percentiles, shared prefix, origins."""

from __future__ import annotations

import json
from pathlib import Path

from vibey_gh.slots.corpus.corpus import build_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.corpus.profile import (
    deepest_stratum_note,
    origin,
    percentiles,
    shared_prefix_share,
)
from vibey_gh.slots.corpus.summary import corpus_summary
from vibey_gh.slots.corpus.turns import Segment, Turn
from vibey_gh.slots.report.documents.corpus_profile import profile_lines

SESSIONS = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"


def test_percentiles_are_nearest_rank() -> None:
    assert percentiles([5, 1, 4, 2, 3, 6, 7, 8, 9, 10]) == {
        "p10": 1,
        "p50": 5,
        "p90": 9,
        "max": 10,
    }
    assert percentiles([]) is None


def test_the_shared_prefix_is_what_the_previous_turn_of_the_run_already_sent() -> None:
    system = {"role": "system", "content": "x" * 50}
    ask = {"role": "user", "content": "y" * 50}
    other = {"role": "user", "content": "z" * 50}
    first = Turn("r#0", "r", 0, [system], [], 10)
    second = Turn("r#1", "r", 1, [system, ask], [], 20)
    third = Turn("r#2", "r", 2, [system, other], [], 20)
    system_size, ask_size = (len(json.dumps(m, separators=(",", ":"))) for m in (system, ask))
    share = shared_prefix_share([Segment("r#0-2", "r", 0, (first, second, third))])
    # Sent: the system message three times and two user messages; shared: the system twice.
    assert share == round(2 * system_size / (3 * system_size + 2 * ask_size), 4)


def test_a_session_corpus_profile_names_agents_dates_and_tool_time() -> None:
    pool = build_pool(PoolSources(from_sessions=[SESSIONS]))
    corpus = build_corpus(pool, window=32768, shape="runs", answer_cap=768)
    profile = corpus_summary(corpus)["profile"]
    assert profile["runs"] == 2
    assert profile["turns_per_run"]["max"] == 4
    assert profile["think_s"]["max"] == 9.0
    assert profile["turns_with_think_s"] == 5
    sessions = profile["origin"]["sessions"]
    assert [session["agent"] for session in sessions] == ["claude-code", "codex"]
    assert sessions[1]["started"].startswith("2026-03-02T10:00:00")
    lines = profile_lines(profile)
    assert any(line.startswith("tool time (s)") for line in lines)
    assert any("codex session 0199d1c4" in line for line in lines)
    assert "zebra-quartz" not in json.dumps(profile)
    # who recorded it, on what, and that a local model will not answer at the same length
    assert (
        "recorded with claude-code 1.0.98, codex 0.46.0 on claude-sonnet-4-5-20250929, "
        "gpt-5-codex" in lines
    )
    assert any("answers differ in length" in line for line in lines)
    # the Codex log records no usage; the Claude Code one does, and is replayed at its size
    assert any("records no usage" in line for line in lines)
    (recorded,) = profile["recorded_depth"]
    assert recorded["deepest_recorded"] == 14_004 and recorded["deepest_reached"] == 14_004
    assert any("14,004 tokens by its log, 14,004 in the corpus" in line for line in lines)


def test_a_run_the_window_cannot_start_is_named_with_why() -> None:
    pool = build_pool(PoolSources(from_sessions=[SESSIONS]))
    corpus = build_corpus(pool, window=4096, shape="runs", answer_cap=768)
    lines = profile_lines(corpus_summary(corpus)["profile"])
    (left,) = [line for line in lines if line.startswith("left out ")]
    assert "claude-code:5c3e9a70" in left and "768 for its answer" in left


def test_traces_that_gave_no_run_are_named_and_a_drop_fit_is_not_called_scaled() -> None:
    deep = {"run": "t1", "requests": 3, "turns": 0, "factor": 1.0, "dropped_turns": 3}
    kept = {"run": "t2", "requests": 2, "turns": 2, "factor": 1.0, "dropped_turns": 0}
    sources = [
        {"source": "trace", "id": "t1", "fit": "drop", "subagents": 0, "runs": [deep]},
        {"source": "trace", "id": "t2", "fit": "drop", "subagents": 0, "runs": [kept],
         "models": ["claude-opus-4-5-20251101"]},
    ]  # fmt: skip
    segment = Segment("t2#0-1", "t2", 3, (Turn("t2#0", "t2", 0, [], [], 3_900),))
    note = deepest_stratum_note([segment], 4096, sources, [])
    assert "scaled" not in note and "as drawn" in note
    found = origin([], sources, {"t2"})["traces"]
    assert found["no_run"] == [{"id": "t1", "why": "no turn fits the window with its answer"}]
    lines = profile_lines(
        {"runs": 1, "turns_per_run": None, "depth_estimate": None, "think_s": None,
         "shared_prefix_share": None, "origin": {"traces": {**found, "fit": ["drop"],
         "factor": None, "subagents": 0, "dropped_turns": 3}}}
    )  # fmt: skip
    assert any(line.startswith("from 1 of 2 trace(s) (fit drop") for line in lines)
    assert "trace t1 gave no run: no turn fits the window with its answer" in lines
    assert "recorded on claude-opus-4-5-20251101" in lines


def test_a_filled_run_is_named_with_what_counted_it_and_older_fills_read_as_estimated() -> None:
    counted = {
        "source": "fill",
        "run": "spec+fill",
        "files_added": 12,
        "deepest_estimate": 80_000,
        "deepest_counted": 63_000,
        "depth_counted_by": "embedded tokenizer of model.gguf abc",
    }
    older = {"source": "fill", "run": "old+fill", "files_added": 3, "deepest_estimate": 60_000}
    found = origin([], [counted, older])["fill"]
    assert found == [
        {"run": "spec+fill", "files_added": 12, "deepest": 63_000,
         "counted_by": "embedded tokenizer of model.gguf abc"},
        {"run": "old+fill", "files_added": 3, "deepest": 60_000,
         "counted_by": "estimate (characters ÷ 3)"},
    ]  # fmt: skip
    segment = Segment("s", "spec+fill", 3, (Turn("spec+fill#0", "spec+fill", 0, [], [], 63_000),))
    assert "by the runner's count" in deepest_stratum_note([segment], 65_536, [counted], [])
    assert "by estimate" in deepest_stratum_note([segment], 65_536, [older], [])
