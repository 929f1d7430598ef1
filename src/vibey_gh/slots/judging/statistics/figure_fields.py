"""Readers of stored figures' fields, each checking its type and range.

Stored figures are derived data anyone could edit: a count is a whole number ≥ 0, a rate or a
standard error a finite number ≥ 0, a share between 0 and 1; anything else raises
`MalformedJson` naming the field, so a damaged store is rebuilt from the evidence.
"""

from __future__ import annotations

from typing import Any

from ....errors import MalformedJson
from ....interfaces import json_fields

RUNS_PER_HOUR = "runs/h"
TURNS_PER_HOUR = "turns/h"


def figure_of_record(data: Any, key: str) -> str:
    """Which figure decided: turns/h where absent (figures from before runs per hour)."""
    value: str = json_fields.text(data, key, TURNS_PER_HOUR)
    if value not in (TURNS_PER_HOUR, RUNS_PER_HOUR):
        raise MalformedJson(f"expected {TURNS_PER_HOUR} or {RUNS_PER_HOUR}, got {value!r}", (key,))
    return value


def count(data: Any, key: str, default: Any = json_fields.REQUIRED) -> Any:
    """A whole number ≥ 0 (None where `default` is None and the field is null or absent)."""
    value = json_fields.integer(data, key, default)
    if value is not None and value < 0:
        raise MalformedJson(f"expected a count ≥ 0, got {value}", (key,))
    return value


def amount(data: Any, key: str, default: Any = json_fields.REQUIRED) -> Any:
    """A finite number ≥ 0: a rate, a duration, a standard error."""
    value = json_fields.number(data, key, default)
    if value is not None and not 0.0 <= value < float("inf"):
        raise MalformedJson(f"expected a finite number ≥ 0, got {value!r}", (key,))
    return value


def share(data: Any, key: str, default: Any = None) -> float | None:
    value = json_fields.number(data, key, default)
    if value is not None and not 0.0 <= value <= 1.0:
        raise MalformedJson(f"expected a share between 0 and 1, got {value!r}", (key,))
    return value  # type: ignore[no-any-return]


def texts(data: object, key: str) -> tuple[str, ...]:
    return tuple(json_fields.strings(data, key, json_fields.REQUIRED))
