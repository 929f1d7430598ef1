"""Session logs replayed at the depth the agent really sent, by the embedded runner's count."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sessions import CLAUDE, CLAUDE_RECORDED, codex_with_usage
from vibey_gh.config import LocalModels
from vibey_gh.runners.registry import runner_kind
from vibey_gh.slots.corpus.sources.sessions import runs_from_sessions
from vibey_gh.state import StateLayout

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def test_the_deepest_turn_is_within_ten_percent_of_what_the_log_recorded(
    layout: StateLayout, tmp_path: Path
) -> None:
    codex, recorded = codex_with_usage(tmp_path, first=20_000)
    config = LocalModels()
    with runner_kind(config.runner).prompt_counter(config, layout) as counter:
        by_runner = runs_from_sessions([CLAUDE, codex], counter)
        by_estimate = runs_from_sessions([CLAUDE, codex])
        expected = {"claude-code": CLAUDE_RECORDED, "codex": recorded[-1]}
        for sized in (by_runner, by_estimate):
            for run in sized.runs:
                deepest = max(run.turns, key=lambda turn: turn.recorded_depth or 0)
                goal = expected[run.run_id.split(":")[0]]
                assert deepest.recorded_depth == goal
                counted = counter.count(deepest.messages, deepest.tools)
                assert abs(counted - goal) <= 0.10 * goal, (run.run_id, counted, goal)
    # sized by the runner's count, the deepest request is counted at its recorded depth
    for source in by_runner.sources:
        prefix = source["unseen_prefix"]
        assert str(prefix["stand_in_sized_by"]).startswith("embedded tokenizer of ")
        assert abs(prefix["deepest_counted"] - prefix["deepest_recorded"]) <= 2
