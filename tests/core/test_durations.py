"""Durations as people write them, and the ones refused."""

from __future__ import annotations

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.interfaces.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("8h", 28800.0), ("30m", 1800.0), ("1h30m", 5400.0), ("90s", 90.0), ("45", 45.0),
     ("1.5h", 5400.0), ("7d", 604800.0), (" 2H ", 7200.0)],
)  # fmt: skip
def test_durations_parse(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "said"),
    [("", "is not a duration"), ("8 hours", "is not a duration"), ("h", "is not a duration"),
     ("-1h", "is not a duration"), ("0", "longer than zero"), ("0m", "longer than zero"),
     ("8d", "more than a week"), ("nan", "is not a duration")],
)  # fmt: skip
def test_bad_durations_say_why_in_one_line(text: str, said: str) -> None:
    with pytest.raises(BadInput, match=said) as caught:
        parse_duration(text)
    assert "\n" not in str(caught.value)


def test_durations_write_back_short() -> None:
    assert format_duration(5400) == "1h30m"
    assert format_duration(28800) == "8h"
    assert format_duration(5) == "5s"
