"""Records declared once: a bound written as one field is read from the config, checked and kept
in evidence, and explained in the report, with no other line written for it."""

from __future__ import annotations

from typing import Annotated

import msgspec
import pytest
from msgspec import Meta

from tests.support.evidence import synthetic_evidence
from vibey_gh.config import read_table
from vibey_gh.errors import ConfigError, MalformedJson
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import checked, error_path, meanings
from vibey_gh.slots.evidence.sections import read_bounds
from vibey_gh.slots.report.documents.context_sections import bounds_section

QUEUE_MEANING = "requests waiting at production ≤ this"


class WithQueueBound(Bounds, frozen=True):
    """Today's bounds and one more: the one declaration a new bound takes."""

    queue_depth: Annotated[int, Meta(ge=1, le=64, description=QUEUE_MEANING)] = 8


WHERE, TABLE = "vibey-gh.toml", "local_models.bounds"


def test_a_declared_bound_is_read_from_the_config_with_its_default_and_range() -> None:
    assert read_table({}, WithQueueBound, WHERE, TABLE).queue_depth == 8
    read = read_table({"queue_depth": 4, "min_gain": 0.2}, WithQueueBound, WHERE, TABLE)
    assert (read.queue_depth, read.min_gain) == (4, 0.2)
    with pytest.raises(ConfigError, match="bounds.queue_depth must be between 1 and 64, not 0"):
        read_table({"queue_depth": 0}, WithQueueBound, WHERE, TABLE)
    with pytest.raises(ConfigError, match="queue_depth must be an integer, not .4."):
        read_table({"queue_depth": "4"}, WithQueueBound, WHERE, TABLE)
    with pytest.raises(ConfigError, match='queue_dept is not a known key .did you mean "queue'):
        read_table({"queue_dept": 4}, WithQueueBound, WHERE, TABLE)
    # today's bounds do not know it
    with pytest.raises(ConfigError, match="queue_depth is not a known key"):
        read_table({"queue_depth": 4}, Bounds, WHERE, TABLE)


def test_non_finite_numbers_in_a_table_are_refused() -> None:
    with pytest.raises(ConfigError, match="min_gain must be between 0.0 and 100.0, not nan"):
        read_table({"min_gain": float("nan")}, Bounds, WHERE, TABLE)
    with pytest.raises(ConfigError, match="ttft_p95_seconds must be a finite number, not inf"):
        read_table({"ttft_p95_seconds": float("inf")}, Bounds, WHERE, TABLE)


def test_a_declared_bound_goes_into_evidence_and_is_checked_when_read_back() -> None:
    written = msgspec.to_builtins(WithQueueBound(queue_depth=4))
    assert written["queue_depth"] == 4 and written["min_gain"] == 0.1
    evidence = synthetic_evidence([], bounds=written)
    assert evidence.document.to_json()["bounds"] == written  # kept as written
    assert checked(evidence.document.bounds, WithQueueBound) == WithQueueBound(queue_depth=4)
    with pytest.raises(
        MalformedJson, match=r"bounds\.queue_depth: expected a whole number <= 64, got 65"
    ):
        read_bounds({"bounds": {**written, "queue_depth": 65}}, WithQueueBound)


def test_the_report_explains_a_declared_bound_in_its_own_words() -> None:
    assert meanings(WithQueueBound)["queue_depth"] == QUEUE_MEANING
    text = "\n".join(bounds_section(synthetic_evidence([]), WithQueueBound(queue_depth=4)))
    row = next(line for line in text.splitlines() if line.startswith("| queue_depth"))
    assert "| 4 |" in row and QUEUE_MEANING in row


def test_every_bound_has_a_meaning() -> None:
    assert all(meanings(Bounds).values()), meanings(Bounds)


def test_a_validation_error_names_the_fields_path() -> None:
    try:
        msgspec.convert([{}, {"patience": "2"}], list[Bounds], strict=True)
    except msgspec.ValidationError as exc:
        assert error_path(exc) == ("expected `int`, got `str`", (1, "patience"))
    else:
        raise AssertionError("not refused")
