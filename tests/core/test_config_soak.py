"""`[local_models] require_soak`: a duration, or off."""

from __future__ import annotations

import pytest

from vibey_gh.config import parse_config
from vibey_gh.errors import ConfigError


@pytest.mark.parametrize(("value", "expected"), [("2h", 7200.0), ("90m", 5400.0), ("off", None)])
def test_require_soak_is_read(value: str, expected: float | None) -> None:
    assert parse_config({"local_models": {"require_soak": value}}, None).require_soak == expected
    assert parse_config({}, None).require_soak is None


@pytest.mark.parametrize(
    ("value", "said"),
    [("two hours", "is not a duration"), ("0h", "longer than zero"), ("9d", "more than a week"),
     (2, "must be a non-empty string")],
)  # fmt: skip
def test_a_require_soak_that_does_not_parse_is_one_line(value: object, said: str) -> None:
    with pytest.raises(ConfigError, match=said) as caught:
        parse_config({"local_models": {"require_soak": value}}, None)
    assert "local_models.require_soak" in str(caught.value) and "\n" not in str(caught.value)
