"""What a session log leaves out (system prompt, tool schemas) replayed at its recorded size."""

from __future__ import annotations

from pathlib import Path

from tests.support.sessions import CLAUDE, CLAUDE_RECORDED, CODEX, codex_with_usage
from vibey_gh.slots.corpus.sources.sessions import runs_from_sessions
from vibey_gh.slots.corpus.turns import depth_estimate


def test_a_claude_code_session_is_replayed_at_its_recorded_depth() -> None:
    imported = runs_from_sessions([CLAUDE])
    (run,) = imported.runs
    assert [turn.recorded_depth for turn in run.turns] == [CLAUDE_RECORDED] * 3
    stand_ins = {turn.stand_in for turn in run.turns}
    assert len(stand_ins) == 1
    (stand_in,) = stand_ins
    # the conversation is a few dozen tokens: nearly all of what was sent is the stand-in
    assert stand_in is not None and 0.95 * CLAUDE_RECORDED < stand_in < CLAUDE_RECORDED
    deepest = run.turns[-1]
    assert abs(deepest.depth_estimate - CLAUDE_RECORDED) <= 2
    # the depth the corpus records is the depth its messages have
    assert abs(deepest.depth_estimate - depth_estimate(deepest.messages, deepest.tools)) <= 1
    # one stand-in object heads every turn: the prefix a runner's cache reuses
    assert all(turn.messages[0] is run.turns[0].messages[0] for turn in run.turns)
    (source,) = imported.sources
    prefix = source["unseen_prefix"]
    assert prefix["usage"] is True and prefix["recorded_turns"] == 3
    assert prefix["stand_in_tokens"] == stand_in


def test_a_codex_rollout_of_20k_token_requests_is_replayed_at_about_20k(tmp_path: Path) -> None:
    path, recorded = codex_with_usage(tmp_path, first=20_000)
    imported = runs_from_sessions([path])
    (run,) = imported.runs
    assert [turn.recorded_depth for turn in run.turns] == recorded
    deepest = max(run.turns, key=lambda turn: turn.recorded_depth or 0)
    assert abs(deepest.depth_estimate - recorded[-1]) <= 2
    # earlier turns: the same stand-in and the conversation so far, close to what they cost
    for turn, tokens in zip(run.turns, recorded, strict=True):
        assert abs(turn.depth_estimate - tokens) <= 0.05 * tokens
    assert imported.sources[0]["models"] == ["gpt-5-codex"]


def test_a_log_without_usage_says_so_and_replays_what_it_has() -> None:
    imported = runs_from_sessions([CODEX])
    (run,) = imported.runs
    assert all(turn.recorded_depth is None and turn.stand_in is None for turn in run.turns)
    assert run.turns[0].messages[0]["role"] == "user"
    assert imported.sources[0]["unseen_prefix"] == {"usage": False}
    assert any("records no usage" in note for note in imported.notes)


def test_the_stand_in_joins_an_opening_system_message_rather_than_adding_one(
    tmp_path: Path,
) -> None:
    path, _ = codex_with_usage(tmp_path, first=3_000)
    lines = path.read_text().splitlines()
    # Codex CLI versions that log their instructions put them in session_meta.
    lines[0] = lines[0].replace('"instructions": null', '"instructions": "Be brief."')
    path.write_text("\n".join(lines) + "\n")
    (run,) = runs_from_sessions([path]).runs
    first = run.turns[0].messages[0]
    assert first["role"] == "system" and str(first["content"]).endswith("\n\nBe brief.")
    assert [m["role"] for m in run.turns[0].messages].count("system") == 1
