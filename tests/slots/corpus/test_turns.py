"""A turn's tool time before it (`think_s`): kept when known, absent when not, never invalid."""

from __future__ import annotations

import math

import pytest

from vibey_gh.errors import MalformedJson
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.slots.corpus.turns import Turn


def _turn(think_s: float | None) -> Turn:
    return Turn("run#0", "run", 0, [{"role": "user", "content": "hi"}], [], 3, think_s=think_s)


def test_a_known_tool_time_round_trips() -> None:
    turn = _turn(1.5)
    assert as_json(turn)["think_s"] == 1.5
    assert checked(as_json(turn), Turn) == turn


def test_an_unknown_tool_time_is_left_out_so_old_corpora_keep_their_bytes() -> None:
    turn = _turn(None)
    assert "think_s" not in as_json(turn)
    assert checked(as_json(turn), Turn).think_s is None


@pytest.mark.parametrize("bad", [-1, math.inf, "3", True])
def test_a_negative_infinite_or_non_numeric_tool_time_names_the_field(bad: object) -> None:
    data = as_json(_turn(1.0))
    data["think_s"] = bad
    with pytest.raises(MalformedJson, match="think_s"):
        checked(data, Turn)
