"""Typed reads of JSON written by this tool, so a damaged file fails as a ValueError that names
the field (and becomes one clear line), never as a crash deep inside the judge."""

from __future__ import annotations

from typing import Any

_REQUIRED = object()


def _get(data: Any, key: str, default: Any) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"expected an object holding {key!r}")
    if key not in data:
        if default is _REQUIRED:
            raise ValueError(f"missing {key!r}")
        return default
    return data[key]


def integer(data: Any, key: str, default: Any = _REQUIRED) -> Any:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key!r} must be a whole number, not {value!r:.40}")
    return value


def number(data: Any, key: str, default: Any = _REQUIRED) -> Any:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key!r} must be a number, not {value!r:.40}")
    return float(value)


def text(data: Any, key: str, default: Any = _REQUIRED) -> Any:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be text, not {value!r:.40}")
    return value


def items(data: Any, key: str) -> list[Any]:
    value = _get(data, key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{key!r} must be a list, not {value!r:.40}")
    return value


def mapping(data: Any, key: str) -> dict[str, Any]:
    value = _get(data, key, {})
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{key!r} must be an object, not {value!r:.40}")
    return value


def optional_numbers(values: Any, what: str) -> tuple[float | int | None, ...]:
    if not isinstance(values, list):
        raise ValueError(f"{what} must be a list, not {values!r:.40}")
    for value in values:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"{what} holds {value!r:.40}, not a number")
    return tuple(values)
