"""Spec globs matched in bounded work: the same answers as the regular expression, linear cost
on hostile globs, and a budget that says so when it runs out."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vibey_gh.errors import BadInput
from vibey_gh.lanes.globs import Glob, MatchBudget, glob_regex
from vibey_gh.lanes.specs import LaneSpec, resolve_files

PIECES = ["a", "b", ".", "/", "*", "**", "**/", "?", "[ab]", "[!a]", "[/]"]
WILDCARDS = ["*", "**", "**/"]
DEEP = "/".join(f"d{level}" for level in range(40))  # a path 40 folders deep


def unlimited() -> MatchBudget:
    return MatchBudget("spec test", steps=10**12)


@settings(max_examples=200, deadline=None)
@given(
    head=st.lists(st.sampled_from(PIECES), max_size=6),
    wildcards=st.lists(st.sampled_from(WILDCARDS), min_size=3, max_size=5),
    tail=st.lists(st.sampled_from(PIECES), max_size=4),
    paths=st.lists(st.text(alphabet="ab./\n", max_size=14), min_size=1, max_size=8),
)
def test_the_automaton_matches_exactly_what_the_regex_matches(
    head: list[str], wildcards: list[str], tail: list[str], paths: list[str]
) -> None:
    pattern = "".join(head) + "".join(wildcards) + "".join(tail)  # three wildcards or more
    expected = [path for path in paths if glob_regex(pattern).match(path)]
    assert Glob(pattern).matching(paths, unlimited()) == expected


def test_ten_any_depth_wildcards_over_a_deep_tree_cost_a_few_steps_per_character() -> None:
    pattern = "**/" * 10 + "x.py"
    paths = [f"{DEEP}/x.py", f"{DEEP}/y.py", f"{DEEP[:60]}/x.py"]
    budget = unlimited()
    assert Glob(pattern).matching(paths, budget) == [paths[0], paths[2]]
    spent = budget.total - budget.left
    # one pass over each path, at most a couple of dozen partial matches alive at a time: the
    # regex would try billions of ways to share 40 folders among ten wildcards
    assert spent < 25 * sum(len(path) for path in paths)


def test_a_budget_that_runs_out_says_so() -> None:
    budget = MatchBudget("spec deep (deep.toml)", steps=1_000)
    files = [f"{DEEP}/f{index}.py" for index in range(50)]
    with pytest.raises(BadInput) as refused:
        Glob("**/" * 10 + "*.py").matching(files, budget)
    assert str(refused.value) == (
        "spec deep (deep.toml): matching its globs against 50 files ran out of its budget of "
        "1,000 steps at '**/**/**/**/**/**/**/**/**/**/*.py'; name fewer or narrower globs"
    )


def test_a_spec_with_hostile_globs_resolves_its_files() -> None:
    folders = [DEEP.split("/")[:depth] for depth in range(41)]
    available = sorted("/".join([*parts, name]) for parts in folders for name in ("x.py", "y"))
    spec = LaneSpec("deep", "t", "task", Path("/repo"), ("**/" * 10 + "x.py",))
    assert resolve_files(spec, available) == [p for p in available if p.endswith("x.py")]
