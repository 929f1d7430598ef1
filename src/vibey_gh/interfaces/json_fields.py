"""The one reader of JSON fields: typed reads of JSON (written by this tool or handed to it),
so a damaged file fails as one `MalformedJson` that names the field by its JSON path (and
becomes one clear line), never as a crash deep inside the judge.

Each read names its own key; `within` (and `each`, `nested`) add the outer parts of the path
as the error passes out, so a reader several levels down need not know where it stands:

    with within("evidence"):
        steps = each(data, "steps", StepRecord.from_json)
    # evidence.steps[3].turns[12].result.finish_reason: expected a string, got 3
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..errors import MalformedJson

T = TypeVar("T")
# A field that must be present (the default of the scalar reads; `items`/`mapping` take it).
REQUIRED: Any = object()
_REQUIRED = REQUIRED


@contextmanager
def within(*path: str | int) -> Iterator[None]:
    """Reads inside this block name their fields below `path`."""
    try:
        yield
    except MalformedJson as exc:
        raise exc.under(*path) from None


def _shown(value: Any) -> str:
    return f"{value!r:.40}"


def _get(data: Any, key: str, default: Any) -> Any:
    if not isinstance(data, dict):
        raise MalformedJson(f"expected an object holding {key!r}, got {_shown(data)}")
    if key not in data:
        if default is _REQUIRED:
            raise MalformedJson("missing", (key,))
        return default
    return data[key]


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def integer(data: Any, key: str, default: Any = _REQUIRED) -> Any:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not _is_integer(value):
        raise MalformedJson(f"expected a whole number, got {_shown(value)}", (key,))
    return value


def number(data: Any, key: str, default: Any = _REQUIRED) -> Any:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not _is_number(value):
        raise MalformedJson(f"expected a number, got {_shown(value)}", (key,))
    return float(value)


def text(data: Any, key: str, default: Any = _REQUIRED) -> Any:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, str):
        raise MalformedJson(f"expected a string, got {_shown(value)}", (key,))
    return value


def boolean(data: Any, key: str, default: Any = _REQUIRED) -> Any:
    value = _get(data, key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, bool):
        raise MalformedJson(f"expected true or false, got {_shown(value)}", (key,))
    return value


def items(data: Any, key: str, default: Any = None) -> list[Any]:
    """A list; absent or null reads as [] unless `default` is `REQUIRED`."""
    value = _get(data, key, default)
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedJson(f"expected a list, got {_shown(value)}", (key,))
    return value


def mapping(data: Any, key: str, default: Any = None) -> dict[str, Any]:
    """An object; absent or null reads as {} unless `default` is `REQUIRED`."""
    value = _get(data, key, default)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedJson(f"expected an object, got {_shown(value)}", (key,))
    return value


def each(data: Any, key: str, parse: Callable[[Any], T], default: Any = None) -> list[T]:
    """Every item of the list at `key`, parsed; a bad item is named by its index."""
    parsed = []
    # try/except rather than `within` per item: a clean read costs nothing (thousands of turns)
    for index, item in enumerate(items(data, key, default)):
        try:
            parsed.append(parse(item))
        except MalformedJson as exc:
            raise exc.under(key, index) from None
    return parsed


def nested(data: Any, key: str, parse: Callable[[dict[str, Any]], T]) -> T:
    """The object at `key` (required), parsed, its fields named below `key`."""
    value = mapping(data, key, REQUIRED)
    try:
        return parse(value)
    except MalformedJson as exc:
        raise exc.under(key) from None


def optional_numbers(values: Any, what: str) -> tuple[float | int | None, ...]:
    """A list of numbers or nulls, such as a timeline point; `what` names it where it has no
    key of its own."""
    if not isinstance(values, list):
        raise MalformedJson(f"{what}: expected a list, got {_shown(values)}")
    for index, value in enumerate(values):
        if value is not None and not _is_number(value):
            raise MalformedJson(f"expected a number, got {_shown(value)}", (index,))
    return tuple(values)


def typed(data: Any, key: str, kind: type[T]) -> T:
    """A required field of one JSON type (str, int, float, bool, list, dict)."""
    readers: dict[type, Callable[[Any, str], Any]] = {
        str: text,
        int: integer,
        float: number,
        bool: boolean,
        list: lambda d, k: items(d, k, REQUIRED),
        dict: lambda d, k: mapping(d, k, REQUIRED),
    }
    value: T = readers[kind](data, key)
    return value
