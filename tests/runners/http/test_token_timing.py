"""Token timing read from the stream as it is: a line is stamped when its bytes arrived, before
it is parsed, and every gap between token chunks is counted in its bucket."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.slot_builders import answer
from vibey_gh.errors import MalformedJson
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.interfaces.token_gaps import (
    GAP_FLOOR_S,
    GROWTH,
    bucket_of,
    checked_gaps,
    merged,
    upper_edge,
)
from vibey_gh.interfaces.turns import TurnResult
from vibey_gh.runners.http.streaming import TokenClock, timed_lines


def test_each_line_carries_when_the_bytes_that_completed_it_arrived() -> None:
    now = [0.0]

    def pieces() -> Iterator[bytes]:
        for at, piece in ((1.0, b"a\nb"), (2.5, b"c\n"), (4.0, b"d")):
            now[0] = at
            yield piece

    lines = list(timed_lines(pieces(), lambda: now[0]))
    assert lines == [(b"a", 1.0), (b"bc", 2.5), (b"d", 4.0)]


def test_a_gap_reads_back_at_most_two_percent_above_itself() -> None:
    for gap in (0.0, GAP_FLOOR_S / 2, 0.0011, 0.02, 0.35, 7.0):
        edge = upper_edge(bucket_of(gap))
        assert gap <= edge or gap < GAP_FLOOR_S
        assert gap < GAP_FLOOR_S or edge <= gap * GROWTH * (1 + 1e-9)


def test_the_token_clock_counts_every_gap_and_a_stall_stays_visible() -> None:
    clock = TokenClock()
    stamps = [0.0, 0.01, 0.02, 0.03, 0.53, 0.54]  # a half-second stall among 10 ms gaps
    for at in stamps:
        clock.token(at)
    result = clock.stamp(answer("x"))
    assert result.token_chunks == 6
    assert sum(n for _, n in result.token_gaps) == 5
    assert max(upper_edge(b) for b, _ in result.token_gaps) >= 0.5
    again = checked(as_json(result), TurnResult)
    assert again.token_gaps == result.token_gaps
    assert merged([result.token_gaps, result.token_gaps]) == tuple(
        (b, 2 * n) for b, n in result.token_gaps
    )


@pytest.mark.parametrize(
    "stored", [[[1, 0]], [[2, 1], [1, 1]], [[1, 1], [1, 1]], [["1", 1]], [[99999, 1]], {"1": 2}]
)
def test_damaged_gaps_are_refused_naming_the_field(stored: object) -> None:
    with pytest.raises(ValueError):
        checked_gaps(stored)
    data = {**as_json(answer("x")), "streamed": True, "token_gaps": stored}
    with pytest.raises(MalformedJson, match="token_gaps"):
        checked(data, TurnResult)
